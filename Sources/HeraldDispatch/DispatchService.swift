import Foundation
import HeraldCore
import HeraldGeo
import HeraldNotifications
import HeraldPayments
import HeraldRealtime
import HeraldStorage
import Logging
import SQLKit
import Synchronization

/// Dispatch: drivers and their positions, jobs with a price, offer rounds to
/// nearby drivers over socket and push, the race-free claim, and every status change told
/// to the customer and to the drivers' feeds.
///
/// Why every change is written with its notifications in one transaction: the job, the
/// offer records and the notifications (with their planned pushes) commit together, so a
/// crash never leaves a driver assigned without the customer's notification, or an offer
/// round recorded without its pushes. Socket events follow the commit; a failed socket send
/// or push never undoes the change (as the dispatch design asks: the job stays assigned).
public final class DispatchService: Sendable {
    public let database: any Database
    public let config: DispatchConfig
    /// Drivers' profiles, approval, availability and positions (their own owner).
    public let drivers: DriverDirectory
    /// Offers, claims and the location stream of this node, for `/metrics`.
    public let statistics: DispatchStatistics
    let hub: RealtimeHub
    let notifications: NotificationService
    /// Starts, updates and ends customers' job Live Activities (nil: none are kept).
    public let liveActivities: LiveActivityService?
    let clock: any HeraldClock
    let logger: Logger
    let pricing: PricingEngine
    let jobs = JobStore()
    let offers = OfferStore()
    let adjustments = AdjustmentStore()
    let holds = HoldStore()
    /// The payment hold of each job, and the provider calls owed.
    public let payments: JobPayments
    public let paymentsConfig: PaymentsConfig
    /// Wakes the offer scheduler (a round ends sooner than its next poll).
    let scheduleChanged: WakeSignal
    /// Wakes the adjustment scheduler (a deadline or a payment retry is due sooner).
    let adjustmentsChanged = WakeSignal()

    public init(
        database: any Database, hub: RealtimeHub, notifications: NotificationService, config: DispatchConfig, clock: any HeraldClock,
        logger: Logger, tracker: DriverTracker = DriverTracker(), payments paymentsConfig: PaymentsConfig = PaymentsConfig(),
        gateway: (any PaymentGateway)? = nil, liveActivities: LiveActivityService? = nil
    ) {
        self.liveActivities = liveActivities
        self.paymentsConfig = paymentsConfig
        self.payments = JobPayments(
            gateway: gateway ?? LedgerGateway(database: database, clock: clock), database: database, clock: clock, logger: logger,
            timing: HoldTiming(lifetimeHours: paymentsConfig.authorizationLifetimeHours, allowanceHours: paymentsConfig.jobAllowanceHours))
        self.database = database
        self.hub = hub
        self.notifications = notifications
        self.config = config
        self.clock = clock
        self.logger = logger
        let statistics = DispatchStatistics()
        self.statistics = statistics
        self.drivers = DriverDirectory(database: database, config: config, tracker: tracker, statistics: statistics, clock: clock)
        self.pricing = PricingEngine(config: config.pricing)
        self.scheduleChanged = WakeSignal()
    }

    public static func driverRoom(_ driverID: String) -> String { "driver:\(driverID)" }

    var now: Int64 { clock.now().epochMilliseconds }

    // MARK: Realtime, after commits

    /// Publishes without failing the caller: the change is committed, the event is a courtesy.
    func publish(_ event: String, _ payload: JSONValue, to room: String) async {
        do {
            try await hub.publish(event, payload: payload, to: room)
        } catch {
            logger.error("publishing a dispatch event failed", metadata: ["event": "\(event)", "room": "\(room)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Publishes many events in one commit, without failing the caller.
    func publish(batch events: [(name: String, payload: JSONValue, room: String)]) async {
        do {
            try await hub.publish(batch: events)
        } catch {
            logger.error("publishing dispatch events failed", metadata: ["events": "\(events.count)", "error": "\(String(reflecting: error))"])
        }
    }

    func addToRoom(_ users: [String], _ room: String) async {
        do {
            try await hub.addUsers(users, to: room)
        } catch {
            logger.error("joining users to a room failed", metadata: ["room": "\(room)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Prepares a notification; nil (logged) when it cannot be, so the domain change still happens.
    /// Writes a prepared notification (if any) in `work`, delivered after its commit.
    func write(_ prepared: NotificationService.PreparedSend?, in work: UnitOfWork) async throws {
        if let prepared { try await notifications.write(prepared, in: work) }
    }

    func prepareNotification(_ draft: NotificationDraft) async -> NotificationService.PreparedSend? {
        do {
            return try await notifications.prepare(draft)
        } catch {
            logger.error("preparing a notification failed", metadata: ["type": "\(draft.type)", "error": "\(String(reflecting: error))"])
            return nil
        }
    }

    /// `job:status` as the dispatch design sends it (the drivers' feeds drop the job on `accepted`).
    func statusPayload(_ job: JobRecord, previous: JobStatus?, driver: DriverRecord?) -> JSONValue {
        [
            "job_id": .string(job.id), "status": .string(job.status.rawValue), "previous_status": previous.map { .string($0.rawValue) } ?? .null,
            "driver_id": job.driverID.map(JSONValue.string) ?? .null, "driver_name": driver.map { .string($0.name) } ?? .null,
            "updated_at": DispatchJSON.time(job.updatedAt),
        ]
    }

    /// A job-status push's data as the dispatch design sends it (`{"job_id", "type": "job_update"}`, to
    /// which the apps route a tap), with the status beside it.
    static func jobUpdateData(_ jobID: String, _ status: JobStatus, _ extra: [String: JSONValue] = [:]) -> [String: JSONValue] {
        var data: [String: JSONValue] = ["job_id": .string(jobID), "type": "job_update", "status": .string(status.rawValue)]
        data.merge(extra) { _, new in new }
        return data
    }

    /// What the customer is told about each status (nil: nothing).
    static func customerMessage(_ status: JobStatus, driverName: String?) -> (type: String, title: String, body: String)? {
        let name = driverName ?? "Your driver"
        switch status {
        case .accepted: return ("driver_assigned", "Driver Assigned", "\(name) has accepted your job.")
        case .enRoute: return ("job_update", "Driver on the way", "\(name) is on the way.")
        case .arrived: return ("job_update", "Driver arrived", "\(name) has arrived.")
        case .started: return ("job_update", "Job started", "\(name) has started the job.")
        case .completed: return ("job_update", "Job completed", "Your job is complete. Thank you!")
        case .cancelled: return ("job_update", "Job cancelled", "Your job was cancelled.")
        case .expired: return ("job_update", "No driver available", "No driver accepted your job in time. Please book again.")
        case .pending: return nil
        }
    }
}
