extension Database {
    /// Runs `body` with the database's service (the PostgreSQL pool) running, then closes the
    /// database: for commands and tests that use it without serving (`herald migrate`).
    public func running<T: Sendable>(_ body: @Sendable @escaping () async throws -> T) async throws -> T {
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await withService(body))
        } catch {
            outcome = .failure(error)
        }
        await close()
        return try outcome.get()
    }

    private func withService<T: Sendable>(_ body: @Sendable @escaping () async throws -> T) async throws -> T {
        guard let service else { return try await body() }
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                try await service.run()
                return nil
            }
            group.addTask { try await body() }
            defer { group.cancelAll() }
            while let result = try await group.next() {
                if let value = result { return value }
            }
            throw CancellationError()
        }
    }
}
