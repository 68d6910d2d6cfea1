import Foundation
import HeraldAuth
import HeraldCore
import HeraldNotifications
import HeraldStorage
import HeraldTestSupport
import SQLKit
import Testing

@testable import HeraldDispatch

/// Jobs through dispatch's owners on both engines (booking, offer rounds, the claim, the
/// driver's steps, cancels): the domain flows, without HTTP. The routes' own concerns (status
/// codes, messages, who may call what) stay in the server's `DispatchRoutesTests`.
@Suite struct JobFlowTests {
    @Test(arguments: TestEngine.allCases)
    func aJobIsOfferedClaimedAndFollowedToCompletion(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database)
            try await h.driver("near", kilometersNorth: 5)
            try await h.driver("other", kilometersNorth: 12)
            try await h.driver("far", kilometersNorth: 80)
            try await h.driver("unapproved", kilometersNorth: 1, approved: false, online: true)
            try await h.driver("offline", kilometersNorth: 1, approved: true, online: false)
            let job = try await h.book()
            #expect(job.status == .pending && job.offerRound == 1)
            // 4900 base + 4 yd × 3500 + 4500 furniture.
            #expect(job.priceMinor == 23_400)
            let offered = try await h.offers(job.id)
            #expect(Set(offered.keys) == ["near", "other"])
            #expect(offered["near"]?.round == 1 && (offered["near"]?.distanceM ?? 0) > 4_900)
            #expect(offered["near"]?.channel == .inbox)  // no socket, no device registered
            #expect(try await h.notifications("near").first?.type == "job_new")
            #expect(try await h.dispatch.jobs.availableJobs(for: "near").first?.job.id == job.id)
            // The claim (a minute later, so the history orders by time): the winner, its repeat, and the loser.
            h.clock.advance(by: 60)
            let (claimed, driver) = try await h.dispatch.claims.accept(job.id, driverID: "near")
            #expect(claimed.status == .accepted && claimed.driverID == "near" && driver.name == "Driver near")
            #expect(try await h.dispatch.claims.accept(job.id, driverID: "near").job.driverID == "near")
            await #expect(throws: DispatchError.alreadyAccepted) { try await h.dispatch.claims.accept(job.id, driverID: "other") }
            #expect(try await h.dispatch.jobs.availableJobs(for: "other").isEmpty)
            let decided = try await h.offers(job.id)
            #expect(decided["near"]?.outcome == .won && decided["other"]?.outcome == .lost)
            let assigned = try await h.notifications("cust").first
            #expect(assigned?.type == "driver_assigned" && assigned?.body == "Driver near has accepted your job.")
            // The price-adjustment design's "call the customer": the assigned driver sees the
            // customer's phone while the job is active; nobody else does, and not after the end.
            try await h.user("cust", name: "Casey", phone: "+14155550123")
            let customer = Identity(userID: "cust", role: .customer, expiresAt: .infinity)
            let assignedDriver = Identity(userID: "near", role: .driver, expiresAt: .infinity)
            let contact = try await h.dispatch.jobs.customerContact(claimed, for: assignedDriver)
            #expect(contact == ["id": "cust", "name": "Casey", "phone": "+14155550123"])
            #expect(try await h.dispatch.jobs.customerContact(claimed, for: customer) == nil)
            #expect(try await h.dispatch.jobs.customerContact(claimed, for: Identity(userID: "ops", role: .operator, expiresAt: .infinity)) == nil)
            // The feeds of the drivers it was offered to drop it; the winner's room is the job's.
            #expect(try await h.statusEvents(room: "driver:other", jobID: job.id).last?["status"] == "accepted")
            #expect(try await h.statusEvents(room: "driver:near", jobID: job.id).isEmpty)
            // Steps in order only; a repeat answers the job as it is.
            await #expect(throws: DispatchError.invalidTransition(from: .accepted, to: "arrived", allowed: [.enRoute])) {
                try await h.dispatch.steps.advance(job.id, driverID: "near", to: "arrived")
            }
            // By the assigned driver only: to anyone else the job is not there.
            await #expect(throws: DispatchError.jobNotFound) { try await h.dispatch.steps.advance(job.id, driverID: "other", to: "en_route") }
            for step in ["en_route", "arrived", "started", "completed"] {
                h.clock.advance(by: 60)
                #expect(try await h.dispatch.steps.advance(job.id, driverID: "near", to: step).status.rawValue == step)
            }
            let completed = try await h.dispatch.steps.advance(job.id, driverID: "near", to: "completed")
            #expect(completed.status == .completed && completed.completedAt != nil)
            #expect(try await h.dispatch.jobs.customerContact(completed, for: assignedDriver) == nil)
            #expect(try await h.dispatch.drivers.profile("near")?.completedJobs == 1)
            // Strangers and the losing driver cannot read it; the customer's list has it.
            await #expect(throws: DispatchError.jobNotFound) {
                try await h.dispatch.jobs.job(job.id, for: Identity(userID: "stranger", role: .customer, expiresAt: .infinity))
            }
            await #expect(throws: DispatchError.jobNotFound) {
                try await h.dispatch.jobs.job(job.id, for: Identity(userID: "other", role: .driver, expiresAt: .infinity))
            }
            #expect(try await h.dispatch.jobs.list(for: customer, status: nil, offset: 0, limit: 20).total == 1)
            // Each status the customer hears of, newest first; the history has every change once.
            #expect(
                try await h.notifications("cust").map(\.title) == ["Job completed", "Job started", "Driver arrived", "Driver on the way", "Driver Assigned"])
            #expect(try await h.dispatch.jobs.events(job.id).map(\.toStatus) == [.pending, .accepted, .enRoute, .arrived, .started, .completed])
            // Completion captures the final price (the ledger's hold).
            let hold = try #require(try await h.dispatch.payments.hold(job.id))
            #expect(hold.capturedMinor == 23_400)
            #expect(
                try await h.statusEvents(room: "job:\(job.id)", jobID: job.id).map { $0["status"] } == [
                    "accepted", "en_route", "arrived", "started", "completed",
                ])
        }
    }

    @Test(arguments: TestEngine.allCases)
    func twoHundredConcurrentClaimsHaveExactlyOneWinner(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database)
            // Profiles straight into the database: the race is what is tested here.
            let now = h.clock.now().epochMilliseconds
            try await database.transaction { db in
                for index in 0..<200 {
                    try await db.raw(
                        """
                        INSERT INTO drivers (user_id, name, truck_type, approval_status, online, created_at, updated_at)
                        VALUES (\(bind: "d\(index)"), \(bind: "D\(index)"), 'van', 'approved', 1, \(bind: now), \(bind: now))
                        """
                    ).run()
                }
            }
            let job = try await h.book()
            let results = await withTaskGroup(of: Result<String, APIError>.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        do {
                            return .success(try await h.dispatch.claims.accept(job.id, driverID: "d\(index)").job.driverID ?? "")
                        } catch let error as APIError {
                            return .failure(error)
                        } catch {
                            return .failure(DispatchError.jobNotFound)
                        }
                    }
                }
                var all: [Result<String, APIError>] = []
                for await result in group { all.append(result) }
                return all
            }
            let winners = results.compactMap { try? $0.get() }
            #expect(winners.count == 1)
            #expect(results.filter { if case .failure(let error) = $0 { error == DispatchError.alreadyAccepted } else { false } }.count == 199)
            let stored = try await h.dispatch.jobs.job(job.id, for: Identity(userID: "cust", role: .customer, expiresAt: .infinity)).job
            #expect(stored.driverID == winners.first)
            #expect(try await h.dispatch.jobs.events(job.id).filter { $0.toStatus == .accepted }.count == 1)
            // One customer notification, from the winner's transaction only.
            #expect(try await h.notifications("cust").filter { $0.type == "driver_assigned" }.count == 1)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func unclaimedJobsAreOfferedWiderThenExpireOnTheInjectedClock(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database)
            let drivers = [("a", 5.0), ("b", 40), ("c", 55), ("d", 80)]
            for (name, km) in drivers { try await h.driver(name, kilometersNorth: km) }
            let job = try await h.book()
            #expect(Set(try await h.offers(job.id).keys) == ["a"])
            // Not yet due: nothing changes.
            h.clock.advance(by: 60)
            try await h.dispatch.offers.runDue()
            #expect(Set(try await h.offers(job.id).keys) == ["a"])
            // Drivers keep reporting (old positions drop out of matching); each round widens.
            var sequence: Int64 = 1
            func nextRound(after seconds: Double) async throws {
                sequence += 1
                for (name, km) in drivers { try await h.report(name, kilometersNorth: km, sequence: sequence) }
                h.clock.advance(by: seconds)
                try await h.dispatch.offers.runDue()
            }
            try await nextRound(after: 61)
            var offers = try await h.offers(job.id)
            #expect(Set(offers.keys) == ["a", "b"] && offers["b"]?.round == 2)
            try await nextRound(after: 121)
            offers = try await h.offers(job.id)
            #expect(Set(offers.keys) == ["a", "b", "c"] && offers["c"]?.round == 3)
            try await nextRound(after: 121)
            let expired = try await h.dispatch.jobs.job(job.id, for: Identity(userID: "cust", role: .customer, expiresAt: .infinity)).job
            #expect(expired.status == .expired)
            #expect(Set(try await h.offers(job.id).values.map(\.outcome)) == [.expired])
            #expect(try await h.notifications("cust").first?.title == "No driver available")
            // Feeds and the job's room hear that it expired; a late claim is refused.
            #expect(try await h.statusEvents(room: "driver:a", jobID: job.id).last?["status"] == "expired")
            #expect(try await h.statusEvents(room: "job:\(job.id)", jobID: job.id).last?["status"] == "expired")
            await #expect(throws: DispatchError.notAvailable(.expired)) { try await h.dispatch.claims.accept(job.id, driverID: "a") }
            // The hold is released.
            #expect(try await h.dispatch.payments.hold(job.id)?.state.status == .cancelled)
        }
    }

    @Test(arguments: TestEngine.allCases)
    func aCancelClosesTheOffersAndTellsTheOtherParty(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let h = DispatchHarness(database: database)
            try await h.driver("near", kilometersNorth: 5)
            let job = try await h.book()
            _ = try await h.dispatch.claims.accept(job.id, driverID: "near")
            _ = try await h.dispatch.steps.advance(job.id, driverID: "near", to: "en_route")
            let customer = Identity(userID: "cust", role: .customer, expiresAt: .infinity)
            let cancelled = try await h.dispatch.steps.cancel(job.id, by: customer, reason: "changed plans")
            #expect(cancelled.status == .cancelled && cancelled.cancelReason == "changed plans" && cancelled.cancelledBy == "customer")
            // Again: the same answer, not a second cancel.
            #expect(try await h.dispatch.steps.cancel(job.id, by: customer, reason: nil).status == .cancelled)
            #expect(try await h.dispatch.jobs.events(job.id).filter { $0.toStatus == .cancelled }.count == 1)
            #expect(try await h.notifications("near").filter { $0.body == "The customer cancelled the job at 1 Market St." }.count == 1)
            #expect(try await h.dispatch.payments.hold(job.id)?.state.status == .cancelled)
            // A driver cannot cancel here, and a stranger cannot see the job.
            await #expect(throws: APIError.self) {
                try await h.dispatch.steps.cancel(job.id, by: Identity(userID: "near", role: .driver, expiresAt: .infinity), reason: nil)
            }
            await #expect(throws: DispatchError.jobNotFound) {
                try await h.dispatch.steps.cancel(job.id, by: Identity(userID: "someone", role: .customer, expiresAt: .infinity), reason: nil)
            }
        }
    }
}
