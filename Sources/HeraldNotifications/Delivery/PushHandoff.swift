import HeraldCore
import HeraldPush
import Synchronization

/// Push deliveries that the node which wrote them sends from memory, without reading them
/// back from the outbox.
///
/// Why: the worker's database path claims due rows, reads each batch's notifications, devices
/// and badges back, then sends — three reads and a claim for rows this node wrote a moment
/// before and still holds in memory. That was most of a push's cost (about 450 µs, an alert
/// to 20,000 riders slower than the Redis design it replaces; BENCHMARKS.md, issue 37). A send that
/// hands its pushes over writes them already claimed (`sending`, attempt 1, a lease of
/// `leaseMilliseconds`) in its own transaction, and after the commit puts the messages here.
///
/// Nothing is weaker than the claimed path: the rows are in the outbox before anything is
/// sent, so a crash before or during the send leaves `sending` rows whose lease ends and any
/// node's worker sends them again (the same `apns-id`, as after a crash mid-batch today).
///
/// The queue is bounded by `capacity`: a send that finds it full writes its pushes as
/// `pending` for the database path instead (`hasRoom` is asked before the write, so several
/// transactions writing at once may overshoot by their own sizes, never without bound).
public final class PushHandoff: Sendable {
    /// One push ready to send: its claimed row and its message, built from what the send wrote.
    public struct Item: Sendable {
        public var delivery: DeliveryRecord
        public var message: PushMessage
    }

    public let capacity: Int
    /// The lease written on a handed-over row (the worker's `push.lease_seconds`).
    public let leaseMilliseconds: Int64
    /// The items and the index of the oldest one not yet taken (compacted as it advances,
    /// so taking from a long queue does not move the rest each time).
    private let queue = Mutex<(items: [Item], head: Int)>(([], 0))
    private let wake: @Sendable () -> Void

    public init(capacity: Int, leaseMilliseconds: Int64, wake: @escaping @Sendable () -> Void) {
        self.capacity = max(0, capacity)
        self.leaseMilliseconds = leaseMilliseconds
        self.wake = wake
    }

    /// Whether `count` more pushes fit (asked before they are written as claimed).
    public func hasRoom(for count: Int) -> Bool {
        count > 0 && depth + count <= capacity
    }

    /// Pushes waiting to be sent.
    public var depth: Int { queue.withLock { $0.items.count - $0.head } }

    /// After the commit that wrote them: queues the pushes and wakes the worker.
    func enqueue(_ items: [Item]) {
        guard !items.isEmpty else { return }
        queue.withLock { $0.items.append(contentsOf: items) }
        wake()
    }

    /// Up to `limit` pushes, oldest first.
    func take(_ limit: Int) -> [Item] {
        queue.withLock { queue in
            let count = min(limit, queue.items.count - queue.head)
            guard count > 0 else { return [] }
            let taken = Array(queue.items[queue.head..<queue.head + count])
            queue.head += count
            if queue.head == queue.items.count {
                queue.items.removeAll(keepingCapacity: queue.items.count <= 4096)
                queue.head = 0
            } else if queue.head >= 1024 && queue.head * 2 >= queue.items.count {
                queue.items.removeFirst(queue.head)
                queue.head = 0
            }
            return taken
        }
    }
}
