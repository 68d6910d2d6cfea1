import HeraldGTFS
import Testing

/// A station is one place near a rider, with its platforms inside (issue 39: a five-platform
/// station filled a four-stop answer).
@Suite struct NearbyPlacesTests {
    @Test func aStationCountsOnceWithItsPlatformsAndLoneStopsFollow() throws {
        let timetable = try AlertReachTests.timetable()
        let stops = timetable.feed.stops
        // Beside Central's platforms: CEN, CEN1, CEN2 are one place, Town Hall (1.2 km) the next.
        let places = NearbyPlaces.find(in: timetable, latitude: -33.8840, longitude: 151.2070, radiusMeters: 2000, limit: 2)
        #expect(places.map { stops[Int($0.stop)].id } == ["CEN", "TH"])
        #expect(places[0].platforms.map { stops[Int($0.stop)].id } == ["CEN1", "CEN2"])
        #expect(places[0].meters < 1, "as near as its nearest platform")
        #expect(places[0].platforms[0].meters < places[0].platforms[1].meters)
        #expect(places[1].platforms.isEmpty)
        // Without grouping, three of four answers were Central.
        let four = NearbyPlaces.find(in: timetable, latitude: -33.8840, longitude: 151.2070, radiusMeters: 10_000, limit: 4)
        #expect(four.map { stops[Int($0.stop)].id } == ["CEN", "TH", "WY", "NS"])
    }

    @Test func aStationFoundByOnePlatformListsAllOfThem() throws {
        let timetable = try AlertReachTests.timetable()
        // Within 30 m of this point is only platform 2 (22 m); platform 1 (35 m) and the station (45 m) are outside.
        let places = NearbyPlaces.find(in: timetable, latitude: -33.8843, longitude: 151.2071, radiusMeters: 30, limit: 10)
        #expect(places.map { timetable.feed.stops[Int($0.stop)].id } == ["CEN"])
        #expect(places[0].platforms.map { timetable.feed.stops[Int($0.stop)].id } == ["CEN2", "CEN1"])
    }
}
