import Foundation
import HeraldCore
import HeraldRealtime
import HeraldStorage
import HeraldTestSupport
import Synchronization

/// A subscriber that records what it is given, and lets a test wait for it.
final class RecordingSubscriber: RealtimeSubscriber {
    let connectionID: UInt64
    let userID: String?
    let isClientConnection: Bool
    private let received = Mutex<[RealtimeEvent]>([])

    init(_ id: UInt64, user: String? = nil, client: Bool = true) {
        connectionID = id
        userID = user
        isClientConnection = client
    }

    func deliver(_ event: RealtimeEvent) {
        received.withLock { $0.append(event) }
    }

    var events: [RealtimeEvent] { received.withLock { $0 } }

    /// Waits (up to `timeout`) until at least `count` events arrived. The default is long: it
    /// returns as soon as they are there, and a loaded machine delays LISTEN/NOTIFY by seconds.
    func waitFor(_ count: Int, timeout: Duration = Patience.limit) async -> [RealtimeEvent] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let current = events
            if current.count >= count { return current }
            try? await CancellableSleep.sleep(for: .milliseconds(10))
        }
        return events
    }
}

let testLogger = TestDatabase.logger
