import Foundation
import HeraldGeo

/// The drivers, their ids, the query points and the location updates, all derived from one seed.
///
/// Drivers fill a 60 km × 60 km box around San Francisco: 40% uniformly (the background),
/// 60% in Gaussian clusters around downtown SF, the Mission, SFO, Daly City, downtown Oakland
/// and Berkeley (σ 1.5–3 km), so density ranges from ~110 to several thousand drivers per km².
/// 70% of queries are drawn like the drivers (pickups happen where drivers are), 30% uniformly.
struct Workload {
    struct Cluster {
        var latitude: Double
        var longitude: Double
        var sigmaMeters: Double
        var weight: Double
    }

    struct Move {
        var driver: Int32
        var point: GeoPoint
    }

    static let center = GeoPoint(latitude: 37.7749, longitude: -122.4194)
    static let halfSideMeters = 30_000.0
    static let metersPerDegreeLatitude = Haversine.earthRadiusMeters * .pi / 180
    static let metersPerDegreeLongitude = metersPerDegreeLatitude * Foundation.cos(center.latitude * .pi / 180)
    static let backgroundWeight = 0.40
    static let clusters: [Cluster] = [
        Cluster(latitude: 37.7897, longitude: -122.4000, sigmaMeters: 2_000, weight: 0.16),  // downtown SF
        Cluster(latitude: 37.7599, longitude: -122.4148, sigmaMeters: 1_500, weight: 0.08),  // Mission
        Cluster(latitude: 37.6213, longitude: -122.3790, sigmaMeters: 1_500, weight: 0.06),  // SFO
        Cluster(latitude: 37.6879, longitude: -122.4702, sigmaMeters: 3_000, weight: 0.08),  // Daly City
        Cluster(latitude: 37.8044, longitude: -122.2712, sigmaMeters: 2_500, weight: 0.14),  // Oakland
        Cluster(latitude: 37.8715, longitude: -122.2730, sigmaMeters: 2_000, weight: 0.08),  // Berkeley
    ]
    static let latitudeRange = (center.latitude - halfSideMeters / metersPerDegreeLatitude)...(center.latitude + halfSideMeters / metersPerDegreeLatitude)
    static let longitudeRange = (center.longitude - halfSideMeters / metersPerDegreeLongitude)...(center.longitude + halfSideMeters / metersPerDegreeLongitude)

    let seed: UInt64
    let drivers: [GeoPoint]
    let ids: [String]
    let queries: [GeoPoint]

    init(drivers driverCount: Int, queries queryCount: Int, seed: UInt64) {
        self.seed = seed
        var rng = SplitMix64(seed: seed)
        drivers = (0..<driverCount).map { _ in Self.samplePoint(&rng) }
        var idRNG = SplitMix64(seed: seed &+ 1)
        ids = (0..<driverCount).map { _ in Self.sampleID(&idRNG) }
        var queryRNG = SplitMix64(seed: seed &+ 2)
        queries = (0..<queryCount).map { _ in
            Double.random(in: 0..<1, using: &queryRNG) < 0.7 ? Self.samplePoint(&queryRNG) : Self.uniformPoint(&queryRNG)
        }
    }

    /// `count` location updates: a random driver moves to a point near its original position
    /// (Gaussian, σ = 60 m per axis: a few seconds of driving), so most stay in their cell
    /// and the rest move to a neighbouring one.
    func moves(count: Int) -> [Move] {
        var rng = SplitMix64(seed: seed &+ 3)
        return (0..<count).map { _ in
            let driver = Int32.random(in: 0..<Int32(drivers.count), using: &rng)
            let origin = drivers[Int(driver)]
            let latitude = origin.latitude + 60 * rng.gaussian() / Self.metersPerDegreeLatitude
            let longitude = origin.longitude + 60 * rng.gaussian() / Self.metersPerDegreeLongitude
            return Move(driver: driver, point: GeoPoint(latitude: latitude, longitude: longitude))
        }
    }

    private static func samplePoint(_ rng: inout SplitMix64) -> GeoPoint {
        var pick = Double.random(in: 0..<1, using: &rng)
        if pick < backgroundWeight { return uniformPoint(&rng) }
        pick -= backgroundWeight
        var cluster = clusters[clusters.count - 1]
        for candidate in clusters {
            if pick < candidate.weight {
                cluster = candidate
                break
            }
            pick -= candidate.weight
        }
        while true {
            let latitude = cluster.latitude + cluster.sigmaMeters * rng.gaussian() / metersPerDegreeLatitude
            let longitude = cluster.longitude + cluster.sigmaMeters * rng.gaussian() / metersPerDegreeLongitude
            if latitudeRange.contains(latitude) && longitudeRange.contains(longitude) {
                return GeoPoint(latitude: latitude, longitude: longitude)
            }
        }
    }

    private static func uniformPoint(_ rng: inout SplitMix64) -> GeoPoint {
        GeoPoint(latitude: .random(in: latitudeRange, using: &rng), longitude: .random(in: longitudeRange, using: &rng))
    }

    private static let base62 = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)

    /// `usr_` + 22 base-62 characters: 26 bytes, like Herald's user ids.
    private static func sampleID(_ rng: inout SplitMix64) -> String {
        var bytes = Array("usr_".utf8)
        for _ in 0..<22 { bytes.append(base62[Int.random(in: 0..<62, using: &rng)]) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
