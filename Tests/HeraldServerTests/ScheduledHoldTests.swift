import Foundation
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import Testing

/// How the job view shows the payment of a job booked past an authorisation's lifetime
/// (payments.authorization_lifetime_hours, 7 days by default): when its hold will be taken,
/// then the hold once the payment scheduler took it. When holds are taken, released and
/// captured is dispatch's `ScheduledHoldFlowTests`.
@Suite struct ScheduledHoldTests {
    static let start = VolumeAdjustmentTests.start
    static let day: TimeInterval = 86_400
    /// Ten days ahead: the hold is due 10 d + 24 h − 168 h = 4 days after booking.
    static let scheduled = start.addingTimeInterval(10 * day)
    static let holdAt = start.addingTimeInterval(4 * day)

    static func bookAhead(_ s: TestSession, at date: Date = scheduled) async throws -> (id: String, price: Double) {
        let (id, reply) = try await DispatchRoutesTests.book(s, extra: ["scheduled_at": .string(Timestamp.string(epochMilliseconds: date.epochMilliseconds))])
        #expect(reply.status == 201)
        return (id, try #require(reply.data?["price"]?["amount_minor"]?.doubleValue))
    }

    /// The job's payment as its customer sees it, once `until` holds (the payment scheduler
    /// may get there before the test's own call).
    static func payment(_ s: TestSession, _ id: String, until: @escaping (JSONValue?) -> Bool = { _ in true }) async throws -> JSONValue? {
        var payment: JSONValue?
        // (Not thrown: the caller's expectations name the payment there was.)
        try? await waitUntil("the job's payment", every: .milliseconds(50)) {
            _ = try await s.runtime.dispatch.service.transitions.runDuePayments()
            payment = try await s.request(.get, "/api/v1/jobs/\(id)", token: try await s.token("cust")).data?["payment"]
            return until(payment)
        }
        return payment
    }

    @Test func theJobViewShowsWhenTheHoldWillBeTakenThenTheHold() async throws {
        let clock = ManualClock(Self.start)
        try await TestServer.run(.sqlite, clock: clock) { s in
            let driver = try await DispatchRoutesTests.driver(s, "d1", kilometersNorth: 3)
            let (id, price) = try await Self.bookAhead(s)
            #expect(try await s.request(.post, "/api/v1/drivers/jobs/\(id)/accept", token: driver).status == 200)
            // Booked: nothing authorised yet, the hold's time shown.
            let booked = try await Self.payment(s, id)
            #expect(booked?["status"] == "scheduled" && booked?["authorized_minor"] == 0 && booked?["pending_operation"] == "authorize")
            #expect(booked?["hold_at"]?.stringValue == Timestamp.string(epochMilliseconds: Self.holdAt.epochMilliseconds))

            clock.advance(by: 4 * Self.day)
            let taken = try await Self.payment(s, id) { $0?["status"] == "authorized" }
            #expect(taken?["status"] == "authorized" && taken?["authorized_minor"]?.doubleValue == price && taken?["hold_at"] == .null)
            #expect(taken?["pending_operation"] == .null)

            // The driver's first step is the route's usual answer (the driver's token is new:
            // the first expired in the four days).
            let fresh = try await s.token("d1", .driver)
            let enRoute = try await s.request(.post, "/api/v1/drivers/jobs/\(id)/status", token: fresh, json: ["status": "en_route"])
            #expect(enRoute.status == 200 && enRoute.data?["status"] == "en_route")
        }
    }
}
