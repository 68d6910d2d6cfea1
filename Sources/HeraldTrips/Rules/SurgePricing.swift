import Foundation
import HeraldCore

/// The surge multiplier of a grid cell: open requests (demand, counting the new one)
/// against free drivers (supply) in the pickup's cell.
///
/// Why a step of 0.1: the multiplier is shown to riders and confirmed by them; a value that
/// moves with every driver's position would make `SURGE_CHANGED` fire on noise.
public struct SurgePricing: Sendable, Equatable {
    public var config: SurgeConfig

    public init(config: SurgeConfig) {
        self.config = config
    }

    /// 1.0 while there is at least one free driver per open request; above that, each extra
    /// request per driver adds `sensitivity`, up to `max_multiplier`. Supply counts as at
    /// least one driver: a lone request in an empty area is not surged (nobody is competing
    /// for a driver), while a queue of requests there is.
    public func multiplier(openRequests: Int, freeDrivers: Int) -> Double {
        guard config.enabled, openRequests > 0 else { return 1.0 }
        let ratio = Double(openRequests) / Double(max(1, freeDrivers))
        guard ratio > 1 else { return 1.0 }
        let raw = min(config.maxMultiplier, 1 + (ratio - 1) * config.sensitivity)
        return (raw * 10).rounded(.down) / 10
    }

    /// The cell a point falls in: `"{row}:{column}"` of a grid of `cell_size_meters` squares
    /// (columns narrow with latitude so cells stay roughly square).
    public func cell(latitude: Double, longitude: Double) -> String {
        let size = config.cellSizeMeters
        let row = Int((latitude * 111_320 / size).rounded(.down))
        let metersPerDegree = max(1_000, 111_320 * cos(Double(row) * size / 111_320 * .pi / 180))
        let column = Int((longitude * metersPerDegree / size).rounded(.down))
        return "\(row):\(column)"
    }

    /// Whether two multipliers differ enough for the rider to confirm again.
    public static func changed(_ a: Double, _ b: Double) -> Bool { abs(a - b) >= 0.05 }
}
