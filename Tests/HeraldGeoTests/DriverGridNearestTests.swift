import HeraldGeo
import Testing

/// `nearest` against `BruteForce.nearest` on random data: results must be identical (ids,
/// order and distances), since both use the same haversine on the same stored positions.
@Suite struct DriverGridNearestTests {
    static let radii: [Double] = [0, 40, 300, 1_000, 3_000, 20_000, 100_000]
    static let limits: [Int] = [1, 3, 20, 150, .max]

    /// A metro-like set: three clusters, a uniform background and a few drivers sharing positions.
    static func metroGrid(cellSizeMeters: Double, drivers: Int, seed: UInt64) -> DriverGrid {
        var rng = SeededGenerator(seed: seed)
        var grid = DriverGrid(cellSizeMeters: cellSizeMeters)
        let clusters = [(37.78, -122.41, 0.01), (37.70, -122.20, 0.02), (37.60, -122.40, 0.005)]
        for i in 0..<drivers {
            let latitude: Double
            let longitude: Double
            switch i % 4 {
            case 0, 1:
                let (lat, lng, spread) = clusters[Int.random(in: 0..<clusters.count, using: &rng)]
                latitude = lat + .random(in: (-spread)...spread, using: &rng) * Double.random(in: 0...1, using: &rng)
                longitude = lng + .random(in: (-spread)...spread, using: &rng) * Double.random(in: 0...1, using: &rng)
            case 2:
                latitude = .random(in: 37.45...37.95, using: &rng)
                longitude = .random(in: -122.65 ... -121.95, using: &rng)
            default:
                // Every 8th driver shares a position with another one (ties broken by id).
                latitude = 37.75 + Double(i % 40) * 0.000_1
                longitude = -122.45
            }
            grid.upsert("drv_\(i)", at: GeoPoint(latitude: latitude, longitude: longitude), time: Int64(i))
        }
        return grid
    }

    @Test(arguments: [250.0, 1_000])
    func matchesBruteForceOnMetroData(cellSizeMeters: Double) {
        let grid = Self.metroGrid(cellSizeMeters: cellSizeMeters, drivers: 3_000, seed: 42)
        var rng = SeededGenerator(seed: 99)
        var nonEmpty = 0
        for query in 0..<300 {
            let center = GeoPoint(latitude: .random(in: 37.4...38.0, using: &rng), longitude: .random(in: -122.7 ... -121.9, using: &rng))
            let radius = Self.radii[query % Self.radii.count]
            let limit = Self.limits[(query / Self.radii.count) % Self.limits.count]
            let expected = BruteForce.nearest(grid, to: center, radiusMeters: radius, limit: limit)
            let actual = grid.nearest(to: center, radiusMeters: radius, limit: limit)
            #expect(actual == expected, "center \(center) radius \(radius) limit \(limit)")
            if !expected.isEmpty { nonEmpty += 1 }
        }
        #expect(nonEmpty > 100)
    }

    @Test func queriesCenteredOnDriversFindThemFirst() {
        let grid = Self.metroGrid(cellSizeMeters: 250, drivers: 2_000, seed: 5)
        for id in grid.driverIDs.prefix(200) {
            let (point, _) = grid.position(of: id)!
            let result = grid.nearest(to: point, radiusMeters: 3_000, limit: 20)
            #expect(result == BruteForce.nearest(grid, to: point, radiusMeters: 3_000, limit: 20))
            #expect(result.first?.distanceMeters == 0)
        }
    }

    @Test func worldwideDataIncludingPolesAndAntimeridian() {
        var rng = SeededGenerator(seed: 2024)
        var grid = DriverGrid(cellSizeMeters: 5_000)
        for i in 0..<3_000 {
            let latitude: Double
            let longitude: Double
            switch i % 3 {
            case 0:
                latitude = .random(in: -90...90, using: &rng)
                longitude = .random(in: -180...180, using: &rng)
            case 1:
                latitude = .random(in: -2...2, using: &rng)
                longitude = Bool.random(using: &rng) ? .random(in: 178.5...180, using: &rng) : .random(in: -180 ... -178.5, using: &rng)
            default:
                latitude = Bool.random(using: &rng) ? .random(in: 88.5...90, using: &rng) : .random(in: -90 ... -88.5, using: &rng)
                longitude = .random(in: -180...180, using: &rng)
            }
            grid.upsert("w\(i)", at: GeoPoint(latitude: latitude, longitude: longitude), time: 0)
        }
        let centers: [GeoPoint] =
            [
                GeoPoint(latitude: 90, longitude: 0), GeoPoint(latitude: -90, longitude: 123),
                GeoPoint(latitude: 89.5, longitude: -45), GeoPoint(latitude: 0, longitude: 180),
                GeoPoint(latitude: 0, longitude: -180), GeoPoint(latitude: 1, longitude: 179.9),
                GeoPoint(latitude: -1, longitude: -179.95),
            ]
            + (0..<60).map { _ in
                GeoPoint(latitude: .random(in: -90...90, using: &rng), longitude: .random(in: -180...180, using: &rng))
            }
        for center in centers {
            for radius in [10_000.0, 100_000, 400_000] {
                for limit in [1, 20, Int.max] {
                    let expected = BruteForce.nearest(grid, to: center, radiusMeters: radius, limit: limit)
                    #expect(
                        grid.nearest(to: center, radiusMeters: radius, limit: limit) == expected,
                        "center \(center) radius \(radius) limit \(limit)")
                }
            }
        }
    }

    /// Rings that start narrow and then reach over the pole (every column of a row) must read
    /// exactly the columns they had not read yet.
    @Test func ringsGrowingOverThePole() {
        var rng = SeededGenerator(seed: 77)
        var grid = DriverGrid(cellSizeMeters: 1_000)
        for i in 0..<4_000 {
            let latitude = i % 2 == 0 ? 89.95 : Double.random(in: 88...90, using: &rng)
            grid.upsert("p\(i)", at: GeoPoint(latitude: latitude, longitude: .random(in: -180...180, using: &rng)), time: 0)
        }
        // Many occupied cells elsewhere, so the search keeps growing rings instead of
        // switching to a scan of the occupied cells.
        for i in 0..<30_000 {
            let point = GeoPoint(latitude: .random(in: -60...60, using: &rng), longitude: .random(in: -180...180, using: &rng))
            grid.upsert("bg\(i)", at: point, time: 0)
        }
        for _ in 0..<40 {
            let center = GeoPoint(latitude: .random(in: 88.5...89.9, using: &rng), longitude: .random(in: -180...180, using: &rng))
            for limit in [50, 400, 1_500] {
                let expected = BruteForce.nearest(grid, to: center, radiusMeters: 300_000, limit: limit)
                #expect(grid.nearest(to: center, radiusMeters: 300_000, limit: limit) == expected, "center \(center) limit \(limit)")
            }
        }
    }

    @Test func wholeEarthRadiusReturnsEveryone() {
        var grid = DriverGrid(cellSizeMeters: 1_000)
        grid.upsert("a", at: GeoPoint(latitude: 10, longitude: 10), time: 0)
        grid.upsert("b", at: GeoPoint(latitude: -10, longitude: -170), time: 0)
        grid.upsert("c", at: GeoPoint(latitude: 89, longitude: 100), time: 0)
        let everyone = grid.nearest(to: GeoPoint(latitude: 0, longitude: 0), radiusMeters: 30_000_000, limit: .max)
        #expect(everyone.map(\.driverID) == ["a", "c", "b"])
        #expect(grid.nearest(to: GeoPoint(latitude: 0, longitude: 0), radiusMeters: 30_000_000, limit: 2).map(\.driverID) == ["a", "c"])
    }

    @Test func invalidQueriesMatchNothing() {
        var grid = DriverGrid()
        grid.upsert("a", at: GeoPoint(latitude: 1, longitude: 1), time: 0)
        let here = GeoPoint(latitude: 1, longitude: 1)
        #expect(grid.nearest(to: here, radiusMeters: 10, limit: 5).count == 1)
        #expect(grid.nearest(to: here, radiusMeters: 10, limit: 0).isEmpty)
        #expect(grid.nearest(to: here, radiusMeters: -1, limit: 5).isEmpty)
        #expect(grid.nearest(to: here, radiusMeters: .nan, limit: 5).isEmpty)
        #expect(grid.nearest(to: GeoPoint(latitude: .nan, longitude: 1), radiusMeters: 10, limit: 5).isEmpty)
        #expect(grid.nearest(to: GeoPoint(latitude: 91, longitude: 1), radiusMeters: 10, limit: 5).isEmpty)
    }
}
