import Testing

@testable import HeraldGeo

@Suite struct DriverGridBehaviourTests {
    let mission = GeoPoint(latitude: 37.7599, longitude: -122.4148)
    let oakland = GeoPoint(latitude: 37.8044, longitude: -122.2712)

    @Test func upsertMovesADriverBetweenCells() {
        var grid = DriverGrid(cellSizeMeters: 250)
        grid.upsert("usr_a", at: mission, time: 1_000)
        grid.upsert("usr_b", at: mission, time: 1_000)
        grid.upsert("usr_a", at: oakland, time: 2_000)
        #expect(grid.count == 2)
        #expect(grid.nearest(to: mission, radiusMeters: 1_000, limit: 10).map(\.driverID) == ["usr_b"])
        #expect(grid.nearest(to: oakland, radiusMeters: 1_000, limit: 10).map(\.driverID) == ["usr_a"])
        let position = grid.position(of: "usr_a")
        #expect(position?.point == oakland)
        #expect(position?.time == 2_000)
    }

    @Test func upsertWithinTheSameCellUpdatesPositionAndTime() {
        var grid = DriverGrid(cellSizeMeters: 1_000)
        grid.upsert("d", at: GeoPoint(latitude: 37.76, longitude: -122.41), time: 1)
        grid.upsert("d", at: GeoPoint(latitude: 37.7601, longitude: -122.4101), time: 2)
        #expect(grid.position(of: "d")?.point == GeoPoint(latitude: 37.7601, longitude: -122.4101))
        #expect(grid.position(of: "d")?.time == 2)
        let match = grid.nearest(to: GeoPoint(latitude: 37.7601, longitude: -122.4101), radiusMeters: 0, limit: 1)
        #expect(match == [DriverMatch(driverID: "d", distanceMeters: 0)])
    }

    @Test func storedPrecisionIsWithinACentimetre() {
        var grid = DriverGrid()
        let exact = GeoPoint(latitude: 37.123_456_789_123, longitude: -122.987_654_321_987)
        grid.upsert("p", at: exact, time: 0)
        let stored = grid.position(of: "p")!.point
        #expect(Haversine.distanceMeters(exact, stored) < 0.01)
    }

    @Test func removeForgetsTheDriverEverywhere() {
        var grid = DriverGrid()
        grid.upsert("usr_a", at: mission, time: 0)
        grid.upsert("usr_b", at: mission, time: 0)
        let first = grid.remove("usr_a")
        let second = grid.remove("usr_a")
        let unknown = grid.remove("never_seen")
        #expect(first)
        #expect(!second)
        #expect(!unknown)
        #expect(grid.count == 1)
        #expect(grid.position(of: "usr_a") == nil)
        #expect(grid.driverIDs == ["usr_b"])
        #expect(grid.nearest(to: mission, radiusMeters: 100, limit: .max).map(\.driverID) == ["usr_b"])
        let last = grid.remove("usr_b")
        #expect(last)
        #expect(grid.count == 0)
        #expect(grid.nearest(to: mission, radiusMeters: 100, limit: .max).isEmpty)
    }

    @Test func removedSlotsAreReused() {
        var grid = DriverGrid()
        for i in 0..<100 { grid.upsert("usr_\(i)", at: mission, time: Int64(i)) }
        for i in stride(from: 0, to: 100, by: 2) { grid.remove("usr_\(i)") }
        for i in 100..<150 { grid.upsert("usr_\(i)", at: oakland, time: Int64(i)) }
        #expect(grid.slotCapacity == 100)
        #expect(grid.count == 100)
        for i in 0..<150 {
            let expected = i >= 100 ? oakland : (i % 2 == 0 ? nil : mission)
            #expect(grid.position(of: "usr_\(i)")?.point == expected)
            if expected != nil { #expect(grid.position(of: "usr_\(i)")?.time == Int64(i)) }
        }
        #expect(grid.nearest(to: oakland, radiusMeters: 10, limit: .max).count == 50)
        #expect(grid.nearest(to: mission, radiusMeters: 10, limit: .max).count == 50)
    }

    @Test func churnWithVaryingIdLengthsKeepsIdsIntactAndTheArenaBounded() {
        var grid = DriverGrid()
        var live: [String: GeoPoint] = [:]
        var rng = SeededGenerator(seed: 11)
        for round in 0..<40 {
            for i in 0..<200 {
                let id = "u" + String(repeating: "x", count: (i * 7 + round) % 40) + "_\(i)"
                if Bool.random(using: &rng) {
                    let point = GeoPoint(latitude: .random(in: 37...38, using: &rng), longitude: .random(in: -123 ... -122, using: &rng))
                    grid.upsert(id, at: point, time: Int64(round))
                    live[id] = grid.position(of: id)!.point
                } else {
                    let removed = grid.remove(id)
                    #expect(removed == (live.removeValue(forKey: id) != nil))
                }
            }
        }
        #expect(grid.count == live.count)
        #expect(Set(grid.driverIDs) == Set(live.keys))
        for (id, point) in live { #expect(grid.position(of: id)?.point == point) }
        let liveBytes = live.keys.reduce(0) { $0 + $1.utf8.count }
        #expect(grid.ids.arenaByteCount <= 2 * liveBytes + 4_096 + 64)
    }

    @Test func freshnessFilterSkipsOlderPositionsOnly() {
        var grid = DriverGrid()
        grid.upsert("old", at: mission, time: 999)
        grid.upsert("edge", at: mission, time: 1_000)
        grid.upsert("new", at: mission, time: 5_000)
        let ids = grid.nearest(to: mission, radiusMeters: 10, limit: 10, freshSince: 1_000).map(\.driverID)
        #expect(ids == ["edge", "new"])
        #expect(grid.nearest(to: mission, radiusMeters: 10, limit: 1, freshSince: 1_001).map(\.driverID) == ["new"])
        #expect(grid.nearest(to: mission, radiusMeters: 10, limit: 10).count == 3)
    }

    @Test func freshnessFilterDoesNotStopTheSearchEarly() {
        // The nearest drivers are stale; fresh ones farther out must still be found.
        var grid = DriverGrid(cellSizeMeters: 250)
        for i in 0..<50 { grid.upsert("stale\(i)", at: mission, time: 0) }
        let far = GeoPoint(latitude: mission.latitude + 0.02, longitude: mission.longitude)
        grid.upsert("fresh", at: far, time: 10)
        let result = grid.nearest(to: mission, radiusMeters: 5_000, limit: 3, freshSince: 10)
        #expect(result.map(\.driverID) == ["fresh"])
    }

    @Test func tiesAreOrderedByDriverID() {
        var grid = DriverGrid()
        for id in ["delta", "alpha", "charlie", "bravo", "echo"] { grid.upsert(id, at: mission, time: 0) }
        grid.upsert("zulu_near", at: GeoPoint(latitude: 37.7599, longitude: -122.41479), time: 0)
        #expect(
            grid.nearest(to: mission, radiusMeters: 100, limit: .max).map(\.driverID)
                == ["alpha", "bravo", "charlie", "delta", "echo", "zulu_near"])
        #expect(grid.nearest(to: mission, radiusMeters: 100, limit: 3).map(\.driverID) == ["alpha", "bravo", "charlie"])
    }

    @Test func radiusBoundaryIsInclusive() {
        var grid = DriverGrid()
        let driver = GeoPoint(latitude: 37.7749, longitude: -122.4194)
        grid.upsert("edge", at: driver, time: 0)
        let center = GeoPoint(latitude: 37.78, longitude: -122.43)
        let exact = Haversine.distanceMeters(center, grid.position(of: "edge")!.point)
        #expect(grid.nearest(to: center, radiusMeters: exact, limit: 1) == [DriverMatch(driverID: "edge", distanceMeters: exact)])
        #expect(grid.nearest(to: center, radiusMeters: exact, limit: .max).count == 1)
        #expect(grid.nearest(to: center, radiusMeters: exact.nextDown, limit: 1).isEmpty)
        #expect(grid.nearest(to: center, radiusMeters: exact.nextDown, limit: .max).isEmpty)
    }

    @Test func antimeridianNeighboursAreFoundFromBothSides() {
        var grid = DriverGrid(cellSizeMeters: 250)
        grid.upsert("east", at: GeoPoint(latitude: 0, longitude: 179.9995), time: 0)
        grid.upsert("west", at: GeoPoint(latitude: 0, longitude: -179.9995), time: 0)
        grid.upsert("plus180", at: GeoPoint(latitude: 0, longitude: 180), time: 0)
        grid.upsert("minus180", at: GeoPoint(latitude: 0, longitude: -180), time: 0)
        grid.upsert("far", at: GeoPoint(latitude: 0, longitude: 179.9), time: 0)
        let fromEast = grid.nearest(to: GeoPoint(latitude: 0, longitude: 179.9999), radiusMeters: 200, limit: .max)
        #expect(Set(fromEast.map(\.driverID)) == ["east", "west", "plus180", "minus180"])
        let fromWest = grid.nearest(to: GeoPoint(latitude: 0, longitude: -179.9999), radiusMeters: 200, limit: 2)
        #expect(fromWest.map(\.driverID) == ["minus180", "plus180"])
        let westOnly = grid.nearest(to: GeoPoint(latitude: 0, longitude: -179.999), radiusMeters: 100, limit: 1)
        #expect(westOnly.map(\.driverID) == ["west"])
        #expect(abs(westOnly[0].distanceMeters - 0.0005 * Haversine.earthRadiusMeters * .pi / 180) < 0.05)
    }

    @Test func poleQueriesSeeEveryLongitude() {
        var grid = DriverGrid(cellSizeMeters: 250)
        for longitude in stride(from: -180.0, through: 180, by: 15) {
            grid.upsert("n\(Int(longitude))", at: GeoPoint(latitude: 89.999, longitude: longitude), time: 0)
        }
        grid.upsert("pole", at: GeoPoint(latitude: 90, longitude: 0), time: 0)
        let ring = 0.001 * Haversine.earthRadiusMeters * .pi / 180
        let all = grid.nearest(to: GeoPoint(latitude: 90, longitude: 77), radiusMeters: ring + 0.01, limit: .max)
        #expect(all.count == 26)
        // cos(90°) is 6e-17 in floating point, so the pole sits a nanometre from itself at another longitude.
        #expect(all.first?.driverID == "pole")
        #expect(all.first.map { $0.distanceMeters < 1e-6 } == true)
        #expect(all.dropFirst().allSatisfy { abs($0.distanceMeters - ring) < 0.02 })
        #expect(grid.nearest(to: GeoPoint(latitude: 90, longitude: 0), radiusMeters: ring / 2, limit: .max).count == 1)
    }

    @Test func countAndDriverIDsTrackEveryChange() {
        var grid = DriverGrid()
        #expect(grid.count == 0)
        #expect(grid.driverIDs.isEmpty)
        for i in 0..<1_000 { grid.upsert("usr_\(i)", at: mission, time: 0) }
        for i in 0..<1_000 { grid.upsert("usr_\(i)", at: oakland, time: 1) }
        #expect(grid.count == 1_000)
        for i in 0..<300 { grid.remove("usr_\(i)") }
        #expect(grid.count == 700)
        #expect(Set(grid.driverIDs) == Set((300..<1_000).map { "usr_\($0)" }))
        #expect(grid.driverIDs.count == 700)
    }

    @Test func copiesAreIndependentValues() {
        var original = DriverGrid()
        original.upsert("a", at: mission, time: 0)
        var copy = original
        copy.upsert("a", at: oakland, time: 1)
        copy.upsert("b", at: oakland, time: 1)
        #expect(original.count == 1)
        #expect(original.position(of: "a")?.point == mission)
        #expect(copy.position(of: "a")?.point == oakland)
    }

    @Test func emptyAndUnicodeIdsWork() {
        var grid = DriverGrid()
        grid.upsert("", at: mission, time: 0)
        grid.upsert("café", at: mission, time: 0)
        grid.upsert("cafe\u{301}", at: oakland, time: 0)
        #expect(grid.count == 3)
        #expect(grid.position(of: "")?.point == mission)
        #expect(grid.nearest(to: mission, radiusMeters: 1, limit: .max).map(\.driverID) == ["", "café"])
    }
}
