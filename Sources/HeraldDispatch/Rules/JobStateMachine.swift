/// Which job transitions each party may make.
///
/// Why a table and not checks spread over routes: every route (driver steps, cancel, the
/// claim, the expiry timer) asks the same question, and a 409 can then list what would have
/// been allowed. The database update that follows is still conditional on the `from` status,
/// so two requests racing on the same job cannot both pass.
public enum JobStateMachine {
    /// The driver's steps, in order, after the claim.
    public static let driverSteps: [JobStatus: JobStatus] = [
        .accepted: .enRoute, .enRoute: .arrived, .arrived: .started, .started: .completed,
    ]

    /// Statuses a customer may still cancel from (before the driver has arrived; later, the
    /// price-adjustment flow decides with a trip fee).
    public static let customerCancellable: Set<JobStatus> = [.pending, .accepted, .enRoute]

    public enum Check: Equatable, Sendable {
        case allowed
        /// Not a move this party can make from here; `allowed` lists the ones it can.
        case invalid(allowed: [JobStatus])
    }

    /// Every status `actor` may move a job to from `status` (the claim, `pending → accepted`,
    /// has its own route and is listed for drivers too).
    public static func allowedTransitions(from status: JobStatus, by actor: JobActor) -> [JobStatus] {
        if status.isFinal { return [] }
        switch actor {
        case .driver:
            if status == .pending { return [.accepted] }
            return driverSteps[status].map { [$0] } ?? []
        case .customer:
            return customerCancellable.contains(status) ? [.cancelled] : []
        case .operator:
            return [.cancelled]
        case .system:
            // Unclaimed in time; or unpaid: a job booked ahead whose hold the card refused
            // is cancelled before the work starts (`JobTransitions.cancelUnpaid`).
            switch status {
            case .pending: return [.expired, .cancelled]
            case .accepted, .enRoute, .arrived: return [.cancelled]
            default: return []
            }
        }
    }

    public static func check(from: JobStatus, to: JobStatus, by actor: JobActor) -> Check {
        let allowed = allowedTransitions(from: from, by: actor)
        return allowed.contains(to) ? .allowed : .invalid(allowed: allowed)
    }
}
