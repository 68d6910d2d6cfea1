import Foundation
import HeraldCore
@_spi(Storage) import HeraldNotifications
import HeraldPush
import HeraldRealtime
import HeraldStorage
import HeraldTestSupport
import Logging
import Synchronization

/// A connection stand-in: records what the hub delivers to it.
final class RecordingSubscriber: RealtimeSubscriber {
    let connectionID: UInt64
    let userID: String?
    private let received = Mutex<[RealtimeEvent]>([])

    init(_ id: UInt64, user: String?) {
        connectionID = id
        userID = user
    }

    func deliver(_ event: RealtimeEvent) { received.withLock { $0.append(event) } }
    var events: [RealtimeEvent] { received.withLock { $0 } }
}

/// A push sender that records every message and answers from a script (default: delivered).
final class ScriptedSender: PushSender {
    private let state = Mutex<(sent: [PushMessage], script: [PushResult])>(([], []))
    let delay: Duration?

    init(_ script: [PushResult] = [], delay: Duration? = nil) {
        state.withLock { $0.script = script }
        self.delay = delay
    }

    func send(_ message: PushMessage) async throws -> PushResult {
        if let delay { try await CancellableSleep.sleep(for: delay) }
        return state.withLock { state in
            state.sent.append(message)
            return state.script.isEmpty ? .accepted(providerMessageID: "pm-\(message.deliveryID)") : state.script.removeFirst()
        }
    }

    var sent: [PushMessage] { state.withLock { $0.sent } }
}

/// A notification service on a real database, a hub on a local bus, and a push worker.
struct NotificationHarness: Sendable {
    let database: any Database
    let clock: ManualClock
    let hub: RealtimeHub
    let service: NotificationService
    let inbox: NotificationInbox
    let worker: DeliveryWorker
    let sender: ScriptedSender

    /// - Parameter handoffCapacity: nil: sends write pending pushes for the worker's database
    ///   path; a number: they hand pushes to the worker's in-memory queue of that size.
    ///   - requestTimeout: the worker's deadline per push. Long by default: a send that is
    ///     merely slow on a loaded machine must not be recorded as "timeout" (only the test of
    ///     that deadline sets a short one).
    init(
        database: any Database, sender: ScriptedSender = ScriptedSender(), handoffCapacity: Int? = nil,
        requestTimeout: Duration = Patience.limit, configure: (inout NotificationsConfig) -> Void = { _ in }
    ) {
        let clock = ManualClock(Timestamp.parse("2026-07-15T02:00:00Z")!)
        let hub = RealtimeHub(database: database, clock: clock, logger: TestDatabase.logger)
        hub.attach(bus: LocalBus(hub: hub))
        let presence = PresenceService(hub: hub, nodeID: "node_test", logger: TestDatabase.logger)
        var config = NotificationsConfig()
        config.ackTimeoutMs = 1000
        configure(&config)
        var settings = DeliveryWorker.Settings()
        settings.requestTimeout = requestTimeout
        settings.handoffCapacity = handoffCapacity ?? 0
        let worker = DeliveryWorker(
            database: database, senders: [:], fallback: sender, clock: clock, settings: settings, logger: TestDatabase.logger)
        self.database = database
        self.clock = clock
        self.hub = hub
        self.service = NotificationService(
            database: database, hub: hub, presence: presence, config: config, clock: clock, logger: TestDatabase.logger,
            handoff: worker.handoff, pushQueued: {})
        // As the notifications module's composition root does.
        hub.onAcknowledge(.delivery) { [weak service = self.service] deliveryID in await service?.acknowledged(deliveryID: deliveryID) }
        self.inbox = NotificationInbox(service: service)
        self.worker = worker
        self.sender = sender
    }

    /// Registers an active device and returns its record.
    @discardableResult
    func device(_ user: String, provider: PushProvider = .apns, token: String? = nil, app: String = PushApps.defaultID) async throws -> DeviceRecord {
        let now = clock.now().epochMilliseconds
        var record = DeviceRecord(
            id: Identifier.make("dev"), userID: user, provider: provider,
            token: token ?? (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined(),
            platform: provider == .apns ? .ios : .android, createdAt: now, lastUsedAt: now)
        record.appID = app
        return try await database.transaction { [record] db in try await DeviceStore().register(db, record, now: now).device }
    }

    func deliveries(_ notificationID: String) async throws -> [DeliveryRecord] {
        try await database.withConnection { db in try await DeliveryStore().forNotification(db, notificationID: notificationID) }
    }

    func draft(_ users: [String], type: String = "trip_update", dedupe: String? = nil) -> NotificationDraft {
        NotificationDraft(userIDs: users, type: type, title: "Your driver is close", body: "2 minutes away", data: ["trip_id": "tr_1"], dedupeKey: dedupe)
    }
}

extension DeliveryWorker.Settings {
    /// The defaults with a long deadline per push (the worker's round is bounded by it too): a
    /// slow send or outcome write on a loaded machine is not a timeout.
    static var patient: Self {
        var settings = Self()
        settings.requestTimeout = Patience.limit
        return settings
    }
}
