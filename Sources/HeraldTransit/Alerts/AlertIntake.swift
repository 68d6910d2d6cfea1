import Synchronization

/// Tells who listens that alerts may have changed on this node: a realtime message taken in
/// or loaded, an alert posted. The alert pusher registers here and wakes on it.
///
/// Why a type of its own: three owners raise it (the loader, realtime intake, posted alerts)
/// and the pusher listens; none of them has to hold another to reach it.
public final class AlertIntake: Sendable {
    private let handlers = Mutex<[@Sendable () -> Void]>([])

    public init() {}

    /// Called after alerts may have changed on this node: a realtime message taken in or
    /// loaded, an alert posted (the alert pusher wakes on it).
    public func onIntake(_ handler: @escaping @Sendable () -> Void) {
        handlers.withLock { $0.append(handler) }
    }

    /// Runs every registered handler.
    func signal() {
        for handler in handlers.withLock({ $0 }) { handler() }
    }
}
