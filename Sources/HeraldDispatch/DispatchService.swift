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

/// Dispatch's composition root: drivers and their positions, jobs with a price, offer rounds
/// to nearby drivers over socket and push, the race-free claim, the driver's steps, price
/// adjustments and the payments they imply. Each concern is its own owner; this type builds
/// them in dependency order and hands them to routes, sockets and schedulers.
///
/// Why every change is written with its notifications in one transaction: the job, the
/// offer records and the notifications (with their planned pushes) commit together, so a
/// crash never leaves a driver assigned without the customer's notification, or an offer
/// round recorded without its pushes. Socket events follow the commit; a failed socket send
/// or push never undoes the change (as the dispatch design asks: the job stays assigned).
/// `JobLifecycle` says which effects each change owes; `JobTransitions` carries them out.
public final class DispatchService: Sendable {
    public let database: any Database
    public let config: DispatchConfig
    /// Drivers' profiles, approval, availability and positions.
    public let drivers: DriverDirectory
    /// Reading jobs: one job for a party, lists, the drivers' feeds, the console's view.
    public let jobs: JobBook
    /// Booking a job (price, hold, first round).
    public let booking: JobBooking
    /// Offer rounds and expiry of pending jobs.
    public let offers: JobOfferRounds
    /// The first-come claim.
    public let claims: JobClaim
    /// The driver's steps and the parties' cancels.
    public let steps: JobSteps
    /// The on-site price adjustment: proposals and their approval.
    public let adjustments: PriceAdjustments
    /// How a proposal ends otherwise: declined, extended, left with the trip fee, expired.
    public let adjustmentEndings: AdjustmentEndings
    /// The payment hold of each job, and the provider calls owed.
    public let payments: JobPayments
    public let paymentsConfig: PaymentsConfig
    /// Offers, claims and the location stream of this node, for `/metrics`.
    public let statistics: DispatchStatistics
    /// Starts, updates and ends customers' job Live Activities (nil: none are kept).
    public let liveActivities: LiveActivityService?
    /// Carries out job transitions and makes the payment calls they owe (and their retries).
    public let transitions: JobTransitions
    let clock: any HeraldClock
    let logger: Logger
    /// Wakes the offer scheduler (a round ends sooner than its next poll).
    let scheduleChanged: WakeSignal
    /// Wakes the adjustment scheduler (a deadline or a payment retry is due sooner).
    let adjustmentsChanged: WakeSignal

    public init(
        database: any Database, hub: RealtimeHub, notifications: NotificationService, config: DispatchConfig, clock: any HeraldClock,
        logger: Logger, tracker: DriverTracker = DriverTracker(), payments paymentsConfig: PaymentsConfig = PaymentsConfig(),
        gateway: (any PaymentGateway)? = nil, liveActivities: LiveActivityService? = nil
    ) {
        let statistics = DispatchStatistics()
        let scheduleChanged = WakeSignal()
        let adjustmentsChanged = WakeSignal()
        let payments = JobPayments(
            gateway: gateway ?? LedgerGateway(database: database, clock: clock), database: database, clock: clock, logger: logger,
            timing: HoldTiming(lifetimeHours: paymentsConfig.authorizationLifetimeHours, allowanceHours: paymentsConfig.jobAllowanceHours))
        let drivers = DriverDirectory(database: database, config: config, tracker: tracker, statistics: statistics, clock: clock)
        let pricing = PricingEngine(config: config.pricing)
        let book = JobBook(database: database, drivers: drivers, config: config)
        let notifier = JobNotifier(
            hub: hub, notifications: notifications, liveActivities: liveActivities, drivers: drivers, database: database, config: config, logger: logger)
        let transitions = JobTransitions(
            database: database, book: book, notifier: notifier, payments: payments, clock: clock, logger: logger, paymentsChanged: adjustmentsChanged)
        let offers = JobOfferRounds(
            book: book, transitions: transitions, config: config, statistics: statistics, logger: logger, scheduleChanged: scheduleChanged)
        self.scheduleChanged = scheduleChanged
        self.adjustmentsChanged = adjustmentsChanged
        self.database = database
        self.config = config
        self.clock = clock
        self.logger = logger
        self.statistics = statistics
        self.liveActivities = liveActivities
        self.paymentsConfig = paymentsConfig
        self.payments = payments
        self.drivers = drivers
        self.jobs = book
        self.transitions = transitions
        self.offers = offers
        self.booking = JobBooking(book: book, rounds: offers, transitions: transitions, pricing: pricing)
        self.claims = JobClaim(book: book, transitions: transitions, statistics: statistics)
        self.steps = JobSteps(book: book, transitions: transitions)
        let adjustments = PriceAdjustments(
            book: book, transitions: transitions, pricing: pricing, paymentsConfig: paymentsConfig, deadlinesChanged: adjustmentsChanged)
        self.adjustments = adjustments
        self.adjustmentEndings = AdjustmentEndings(proposals: adjustments)
    }

    public static func driverRoom(_ driverID: String) -> String { "driver:\(driverID)" }

    var now: Int64 { clock.now().epochMilliseconds }
}
