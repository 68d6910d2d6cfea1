import HeraldCore
import Testing

@Suite struct DeadlineTests {
    @Test func returnsTheValueWhenInTime() async throws {
        let value = try await withDeadline(.seconds(5)) { 42 }
        #expect(value == 42)
    }

    @Test func cancelsAndThrowsWhenTooSlow() async throws {
        let start = ContinuousClock.now
        await #expect(throws: DeadlineExceeded.self) {
            try await withDeadline(.milliseconds(50)) {
                try await Task.sleep(for: .seconds(30))
                return 1
            }
        }
        // Well under the 30 s the operation would take (generous: the whole suite shares two cores).
        #expect(ContinuousClock.now - start < .seconds(25))
    }

    @Test func passesTheOperationsErrorThrough() async throws {
        struct Nope: Error {}
        await #expect(throws: Nope.self) { try await withDeadline(.seconds(5)) { () async throws -> Int in throw Nope() } }
    }
}
