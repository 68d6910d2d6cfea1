/// When a job's payment hold is taken.
///
/// Why not always at booking: a card authorisation lapses (Stripe: 7 days for online card
/// payments), and a job booked for a date past that would reach its completion with nothing
/// left to capture. Such a job takes its hold at the earliest moment from which the hold
/// still covers the whole job — `scheduled_at + allowance − lifetime` — which leaves the
/// customer the most time to hear of a refusal. Everything else is held at booking, as the
/// price-adjustment design does.
public struct HoldTiming: Sendable, Equatable {
    /// How long an authorisation can be captured, in milliseconds.
    public var lifetime: Int64
    /// How long after `scheduled_at` the job may still be captured, in milliseconds.
    public var allowance: Int64

    public init(lifetimeHours: Int, allowanceHours: Int) {
        lifetime = Int64(lifetimeHours) * 3_600_000
        allowance = Int64(allowanceHours) * 3_600_000
    }

    /// When to take the hold of a job booked at `now`: nil means now (a hold taken now still
    /// covers the job); otherwise the moment (epoch milliseconds) from which it does.
    public func holdAt(scheduledAt: Int64?, now: Int64) -> Int64? {
        guard let scheduledAt else { return nil }
        let earliest = scheduledAt + allowance - lifetime
        return earliest > now ? earliest : nil
    }
}
