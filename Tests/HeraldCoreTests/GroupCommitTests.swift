import HeraldCore
import Synchronization
import Testing

@Suite struct GroupCommitTests {
    @Test func concurrentCallersShareBatchesAndEachGetsItsOwnOutput() async throws {
        let batches = Mutex<[[Int]]>([])
        let commit = GroupCommit<Int, Int>(maxBatch: 50) { items in
            batches.withLock { $0.append(items) }
            try await CancellableSleep.sleep(for: .milliseconds(5))  // a statement's round trip
            return items.map { $0 * 10 }
        }
        let results = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<500 { group.addTask { (index, try await commit.submit(index)) } }
            return try await group.reduce(into: [Int: Int]()) { $0[$1.0] = $1.1 }
        }
        #expect(results.count == 500 && results.allSatisfy { $0.value == $0.key * 10 })
        let written = batches.withLock { $0 }
        // Every item written exactly once, in batches no larger than asked, far fewer than 500.
        #expect(written.flatMap { $0 }.sorted() == Array(0..<500))
        #expect(written.allSatisfy { $0.count <= 50 })
        #expect(written.count < 100)
    }

    @Test func aFailedBatchFailsEveryCallerInItAndTheNextBatchStillRuns() async throws {
        struct Broken: Error {}
        let calls = Atomic<Int>(0)
        let commit = GroupCommit<String, String> { items in
            if calls.add(1, ordering: .relaxed).newValue == 1 { throw Broken() }
            return items
        }
        await #expect(throws: Broken.self) { try await commit.submit("first") }
        #expect(try await commit.submit("second") == "second")
    }

    @Test func aWriterThatLosesOutputsIsAnErrorNotAHang() async throws {
        let commit = GroupCommit<Int, Int> { _ in [] }
        await #expect(throws: GroupCommitError.outputCountMismatch) { try await commit.submit(1) }
    }

    @TaskLocal static var caller: Int?

    /// Under steady load a caller writes only the batch that holds its own item, then passes
    /// the lead on: it never goes on writing others' batches while its answer waits.
    @Test func eachCallerWritesOnlyTheBatchWithItsOwnItem() async throws {
        let batches = Mutex<[(writer: Int?, items: [Int])]>([])
        let commit = GroupCommit<Int, Int>(maxBatch: 8) { items in
            batches.withLock { $0.append((Self.caller, items)) }
            try await CancellableSleep.sleep(for: .milliseconds(2))
            return items
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<300 {
                group.addTask {
                    let output = try await Self.$caller.withValue(index) { try await commit.submit(index) }
                    #expect(output == index)
                }
            }
            try await group.waitForAll()
        }
        let written = batches.withLock { $0 }
        #expect(written.flatMap(\.items).sorted() == Array(0..<300))
        for batch in written {
            let writer = try #require(batch.writer)
            #expect(batch.items.contains(writer), "caller \(writer) wrote \(batch.items)")
        }
    }
}
