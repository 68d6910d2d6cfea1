import HeraldAuth
import HeraldCore
import HeraldTestSupport
import Testing

@testable import HeraldDispatch

/// A pending job in the drivers' market through dispatch's owners on both engines: its offer
/// rounds carried on by a restarted node, and the feeds that show it told when it leaves them.
/// How the feed route renders a job stays in the server's `DispatchRoutesTests`.
@Suite struct JobFeedTests {
    /// A round's end and the drivers' positions live in the database, so a node that restarts mid-search runs the next, wider round.
    @Test(arguments: TestEngine.allCases)
    func offerRoundsSurviveARestart(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database)
            try await h.driver("a", kilometersNorth: 5)
            try await h.driver("b", kilometersNorth: 40)
            await h.flushPositions()
            let job = try await h.book()
            h.clock.advance(by: 125)
            // The restarted node: its index is rebuilt from the database before the round runs.
            let restarted = DispatchHarness(database: database, clock: h.clock)
            #expect(try await restarted.dispatch.drivers.rebuildIndex() == 2)
            try await restarted.dispatch.offers.runDue()
            let offers = try await restarted.offers(job.id)
            #expect(Set(offers.keys) == ["a", "b"] && offers["b"]?.round == 2)
        }
    }

    /// A job left in a feed costs a tap and a 409, and the feed reaches further than the first round: every driver it shows in must hear.
    @Test(arguments: TestEngine.allCases)
    func everyDriverWhoseFeedShowsAJobHearsWhenItLeaves(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database)
            try await h.driver("near", kilometersNorth: 5)
            try await h.driver("wide", kilometersNorth: 45)  // inside max_radius_km, outside round 1
            try await h.driver("resting", kilometersNorth: 3, approved: true, online: false)
            try await h.driver("far", kilometersNorth: 80)
            await h.flushPositions()
            let job = try await h.book()
            #expect(Set(try await h.offers(job.id).keys) == ["near"])
            // Each of them sees the job in the feed (so each must hear that it is gone).
            for driver in ["near", "wide", "resting"] {
                let feed = try await h.dispatch.jobs.availableJobs(for: driver).map { $0.job.id }
                #expect(feed.first == job.id, "\(driver): \(feed)")
            }
            _ = try await h.dispatch.claims.accept(job.id, driverID: "near")
            for driver in ["wide", "resting"] {
                let told = try await h.statusEvents(room: "driver:\(driver)", jobID: job.id)
                #expect(told.count == 1 && told.first?["status"] == "accepted", "\(driver): \(told)")
            }
            #expect(try await h.statusEvents(room: "driver:far", jobID: job.id).isEmpty)
            #expect(try await h.statusEvents(room: "driver:near", jobID: job.id).isEmpty)  // the winner follows the job room

            // A job without coordinates is in every feed: when it is cancelled, every driver hears.
            let open = try await h.bookWithoutSite()
            let customer = Identity(userID: "cust", role: .customer, expiresAt: .infinity)
            #expect(try await h.dispatch.steps.cancel(open.id, by: customer, reason: "sorted").status == .cancelled)
            for driver in ["wide", "resting", "far"] {
                let told = try await h.statusEvents(room: "driver:\(driver)", jobID: open.id)
                #expect(told.count == 1 && told.first?["status"] == "cancelled", "\(driver): \(told)")
            }
        }
    }
}
