import ServiceLifecycle
import Synchronization

/// Opens once, when the node may start work that needs it: the schema migrated, before any
/// service touches a table.
///
/// Why its own type in the core: that the schema is ready is the application's fact, known
/// by its composition root (which runs the migrations), not any module's. It was a flag on
/// the realtime hub, so every module that waited reached into the hub for it.
public final class StartupGate: Sendable {
    private let isOpen: Atomic<Bool>

    /// - Parameter open: true where nothing has to happen first (a test, a tool).
    public init(open: Bool = false) {
        isOpen = Atomic(open)
    }

    public func open() {
        isOpen.store(true, ordering: .releasing)
    }

    public var opened: Bool { isOpen.load(ordering: .acquiring) }

    /// Waits until `open()`; false when a shutdown or cancellation came first (the service
    /// then returns without starting its work).
    public func wait() async -> Bool {
        // Polled: it waits once per service at start-up, for a few hundred milliseconds.
        while !opened {
            if Task.isShuttingDownGracefully || Task.isCancelled { return false }
            try? await CancellableSleep.sleep(for: .milliseconds(20))
        }
        return true
    }
}
