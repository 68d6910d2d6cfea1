import HeraldCore
import HeraldRealtime
import Logging

/// The `$transit` room every node shares: an import or a realtime message taken in on one
/// node is announced there, and every node (this one included) wakes its reload loop on
/// hearing it (`TransitFollower`).
///
/// Why a type of its own: imports and realtime intake announce and the loader listens;
/// neither has to hold the other to reach the room.
final class TransitAnnouncements: Sendable {
    /// Every node hears imports and realtime intake here; no client can subscribe to it.
    static let room = "$transit"

    let hub: RealtimeHub
    let logger: Logger
    let follower = TransitFollower()

    /// Joins this node's follower to the room.
    init(hub: RealtimeHub, logger: Logger) {
        self.hub = hub
        self.logger = logger
        hub.join(follower, room: Self.room)
    }

    /// Signalled at every announcement (the reload loop wakes on it).
    var wake: WakeSignal { follower.wake }

    /// Tells every node to reload (itself included: a no-op there).
    func announce(_ payload: JSONValue) async {
        do {
            try await hub.publish("changed", payload: payload, to: Self.room, persist: false)
        } catch {
            logger.warning(
                "announcing a transit change failed; other nodes catch up within reload_interval_seconds", metadata: ["error": "\(String(reflecting: error))"])
        }
    }
}
