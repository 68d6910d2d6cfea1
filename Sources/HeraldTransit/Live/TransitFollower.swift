import HeraldCore
import HeraldGTFS
import HeraldRealtime

/// This node's ear on the `$transit` room: an announcement (an import, a realtime message
/// taken in on some node) wakes the reload loop at once instead of at its next interval.
final class TransitFollower: RealtimeSubscriber {
    let connectionID: UInt64 = (1 << 59) | UInt64.random(in: 0..<(1 << 40))
    var userID: String? { nil }
    var isClientConnection: Bool { false }
    let wake = WakeSignal()

    func deliver(_ event: RealtimeEvent) {
        wake.signal()
    }
}
