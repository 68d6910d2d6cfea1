import HeraldCore
import HeraldGeo
import HeraldTestSupport
import Testing

@testable import HeraldDispatch

/// Drivers' positions through dispatch's owners on both engines: the tracker takes a report at
/// once and the database later (the index sync's write-behind, flushed by hand here), the app
/// sessions a sequence counts in, and who a job without a site reaches. The location route's
/// answers (the JSON of a stale sample, 422s) stay in the server's `DispatchRoutesTests`.
@Suite struct DriverFlowTests {
    /// Matching must not wait on a write per report, yet the database must catch up, and drivers without a position still get work.
    @Test(arguments: TestEngine.allCases)
    func positionsAreWrittenBehindAndAJobWithoutCoordinatesGoesToEveryone(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database)
            try await h.driver("x", kilometersNorth: 5)
            try await h.driver("y", kilometersNorth: 900)
            // Taken in memory at once; in the database after the flush.
            #expect(try await h.dispatch.drivers.profile("y")?.locationSeq == nil)
            #expect(await h.flushPositions() == 2)
            #expect(try await h.dispatch.drivers.profile("y")?.locationSeq == 1)
            // Online and approved but no position sent yet: the dispatch design broadcasts to them too.
            try await h.driver("nopos", kilometersNorth: nil)
            try await h.driver("offline", kilometersNorth: 2, approved: true, online: false)
            let job = try await h.bookWithoutSite()
            #expect(job.latitude == nil && job.longitude == nil)
            #expect(Set(try await h.offers(job.id).keys) == ["x", "y", "nopos"])
        }
    }

    /// A restarted app counts from 1 again under a new `session_id`; its samples must not be dropped as stale (the rider's map would freeze).
    @Test(arguments: TestEngine.allCases)
    func aRestartedAppsSamplesAreAcceptedInItsNewSession(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database)
            try await h.driver("restart", kilometersNorth: nil)
            func report(_ sequence: Int64, _ session: String) async throws -> DriverTracker.LocationOutcome {
                try await h.dispatch.drivers.reportLocation(
                    "restart", LocationUpdate(point: GeoPoint(latitude: 37.78, longitude: -122.41), sequence: sequence, session: session))
            }
            #expect(try await report(900, "launch-1") == .accepted)
            await h.flushPositions()
            // Within a session an older sequence is refused; a new session's first sample is written over the old one's higher sequence.
            #expect(try await report(1, "launch-1") == .stale(lastSequence: 900))
            #expect(try await report(1, "launch-2") == .accepted)
            await h.flushPositions()
            let stored = try await h.dispatch.drivers.profile("restart")
            #expect(stored?.locationSeq == 1 && stored?.locationSession == "launch-2")
            // A session id is printable ASCII without spaces.
            let refused = try #require(throws: APIError.self) {
                try LocationUpdate.parse(["lat": 37.78, "lng": -122.41, "sequence": 1, "session_id": "has space"])
            }
            #expect(refused.status == 422 && refused.details?["fields"]?[0]?["field"] == "session_id")
        }
    }
}
