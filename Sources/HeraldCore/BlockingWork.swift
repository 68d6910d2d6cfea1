import NIOPosix

/// Runs long synchronous CPU work (parsing a whole GTFS feed, building its timetable) on
/// one thread of its own and waits for it without holding a thread of Swift's cooperative
/// pool.
///
/// Why: the cooperative pool has one thread per CPU. On a 2-core server, two seconds of
/// parsing on it leave every request, socket write and timer waiting for those seconds.
/// Why one thread: jobs of this kind run one after another, so however many imports and
/// version loads are asked for at once, they take at most one CPU and the rest of the
/// machine keeps serving.
/// Why NIO's thread pool and not a Dispatch queue: a pool thread of its own that exists for
/// the whole process. With a serial Dispatch queue, test runs on Linux (Swift 6.3.1) were
/// seen to stall for good with work queued and no Dispatch worker thread running it.
public enum BlockingWork {
    private static let pool: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        return pool
    }()

    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await pool.runIfActive(work)
    }
}
