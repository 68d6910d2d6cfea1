/// How far and how fast people walk between stops, and the time a change needs.
///
/// Why straight-line distance × a detour factor: Herald has no street graph; real walks are
/// longer than the crow flies (1.3 is a common urban average), and a planner that promises a
/// 2-minute walk that takes 4 loses the connection.
public struct WalkingRules: Sendable, Equatable {
    /// Stops at most this far apart (straight line) get a footpath between them.
    public var maxTransferMeters: Double = 400
    /// Walking speed: 1.2 m/s ≈ 4.3 km/h, the usual planner default.
    public var metersPerSecond: Double = 1.2
    /// Real walking distance ÷ straight-line distance.
    public var detourFactor: Double = 1.3
    /// The least time a change of vehicle takes at one stop (getting off, finding the platform).
    public var minimumChangeSeconds: Int32 = 60

    public init() {}

    /// Seconds to walk `meters` of straight-line distance.
    public func seconds(meters: Double) -> Int32 {
        Int32((meters * detourFactor / metersPerSecond).rounded(.up))
    }
}
