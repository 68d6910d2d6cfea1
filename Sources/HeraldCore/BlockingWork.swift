import Dispatch

/// Runs long synchronous CPU work (parsing a whole GTFS feed, building its timetable) on
/// one Dispatch thread of its own and waits for it without holding a thread of Swift's
/// cooperative pool.
///
/// Why: the cooperative pool has one thread per CPU. On a 2-core server, two seconds of
/// parsing on it leave every request, socket write and timer waiting for those seconds.
/// Why one serial queue: jobs of this kind run one after another, so however many imports
/// and version loads are asked for at once, they take at most one CPU and the rest of the
/// machine keeps serving.
public enum BlockingWork {
    private static let queue = DispatchQueue(label: "herald.blocking-work", qos: .utility)

    public static func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try work() })
            }
        }
    }
}
