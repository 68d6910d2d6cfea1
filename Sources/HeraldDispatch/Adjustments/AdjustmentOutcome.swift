/// The result of an adjustment call: the job, its adjustment and its payment hold (what the
/// routes answer, whichever owner made the call).
public struct AdjustmentOutcome: Sendable {
    public var job: JobRecord
    public var adjustment: AdjustmentRecord
    public var hold: HoldRecord?
}
