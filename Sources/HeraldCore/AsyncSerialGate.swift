/// Lets one task at a time into a critical section that may suspend, first come first served.
///
/// Why: an SQLite connection can carry only one transaction; statements of any other task
/// must wait until it commits, or they would silently become part of it. A `Mutex` cannot
/// be held across `await`, so the waiting is done with continuations.
public actor AsyncSerialGate {
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var head = 0

    public init() {}

    public func enter() async {
        if !busy {
            busy = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    public func leave() {
        if head < waiters.count {
            let next = waiters[head]
            head += 1
            if head > 64, head * 2 > waiters.count {
                waiters.removeFirst(head)
                head = 0
            }
            next.resume()
        } else {
            busy = false
        }
    }

    /// Runs `body` while holding the gate; the gate is released however `body` ends.
    public nonisolated func run<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        await enter()
        do {
            let result = try await body()
            await leave()
            return result
        } catch {
            await leave()
            throw error
        }
    }
}
