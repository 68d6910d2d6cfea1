import HeraldGeo
import Testing

@Suite struct DriverIndexTests {
    @Test func concurrentUpdatesAndQueriesLoseNothing() async {
        let index = DriverIndex()
        let center = GeoPoint(latitude: 37.77, longitude: -122.42)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for i in 0..<500 {
                        let point = GeoPoint(latitude: center.latitude + Double(i) * 1e-5, longitude: center.longitude + Double(worker) * 1e-5)
                        index.upsert("w\(worker)_\(i)", at: point, time: Int64(i))
                        _ = index.nearest(to: center, radiusMeters: 3_000, limit: 20)
                    }
                }
            }
        }
        #expect(index.count == 4_000)
        #expect(Set(index.driverIDs).count == 4_000)
        #expect(index.nearest(to: center, radiusMeters: 100_000, limit: .max).count == 4_000)
        #expect(index.nearest(to: center, radiusMeters: 3_000, limit: 1).map(\.driverID) == ["w0_0"])
    }

    @Test func forwardsEveryOperation() {
        let index = DriverIndex(cellSizeMeters: 500)
        let here = GeoPoint(latitude: 1, longitude: 2)
        index.upsert("a", at: here, time: 7)
        #expect(index.position(of: "a")?.time == 7)
        #expect(index.nearest(to: here, radiusMeters: 1, limit: 1, freshSince: 8).isEmpty)
        let cellSize = index.withGrid { grid -> Double in
            grid.upsert("b", at: here, time: 9)
            return grid.cellSizeMeters
        }
        #expect(cellSize == 500)
        #expect(index.nearest(to: here, radiusMeters: 1, limit: 5, freshSince: 8).map(\.driverID) == ["b"])
        let removed = index.remove("a")
        #expect(removed)
        #expect(index.count == 1)
    }
}
