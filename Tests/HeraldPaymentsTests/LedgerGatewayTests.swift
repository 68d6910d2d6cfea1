import Foundation
import HeraldCore
import HeraldPayments
import HeraldStorage
import HeraldTestSupport
import SQLKit
import Testing

/// The ledger provider on both engines: the rules a card processor enforces, and idempotency.
@Suite struct LedgerGatewayTests {
    static func request(_ key: String, amount: Int64 = 23_400) -> HoldRequest {
        HoldRequest(jobID: "job_1", customerID: "ann", amountMinor: amount, currency: "USD", paymentMethodID: nil, idempotencyKey: key)
    }

    @Test(arguments: TestEngine.allCases)
    func holdsChangeCaptureAndCloseLikeACardProcessor(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { db in
            let ledger = LedgerGateway(database: db, clock: SystemClock())
            let held = try await ledger.authorize(Self.request("job_1:authorize"))
            #expect(held.status == .authorized && held.authorizedMinor == 23_400 && held.capturedMinor == 0)
            let raised = try await ledger.changeAmount(held, to: 32_150, idempotencyKey: "job_1:change:32150")
            #expect(raised.amountMinor == 32_150 && raised.authorizedMinor == 32_150)
            // More than the hold cannot be captured; a capture takes part and closes the hold.
            await #expect(throws: PaymentError.self) { try await ledger.capture(raised, amountMinor: 40_000, idempotencyKey: "k-over") }
            let captured = try await ledger.capture(raised, amountMinor: 5_000, idempotencyKey: "job_1:capture:5000")
            #expect(captured.status == .captured && captured.capturedMinor == 5_000)
            // Closed: no change, no cancel, and the error says why.
            do {
                _ = try await ledger.changeAmount(captured, to: 10_000, idempotencyKey: "k-late")
                Issue.record("a captured hold changed")
            } catch let error as PaymentError {
                #expect(error.kind == .holdClosed)
            }
            do {
                _ = try await ledger.cancel(captured, idempotencyKey: "k-cancel")
                Issue.record("a captured hold was released")
            } catch let error as PaymentError {
                #expect(error.kind == .holdClosed)
            }
            // Repeating a call with its key returns its first result without applying again.
            let again = try await ledger.capture(raised, amountMinor: 5_000, idempotencyKey: "job_1:capture:5000")
            #expect(again == captured)
            #expect(try await ledger.entries(held.reference).map(\.operation).sorted() == ["authorize", "capture", "change"])
            // A key reused for a different operation is refused.
            await #expect(throws: PaymentError.self) { try await ledger.cancel(captured, idempotencyKey: "job_1:change:32150") }
            // Unknown holds are invalid, not closed.
            let ghost = HoldState(reference: "hold_nope", status: .authorized, authorizedMinor: 1, amountMinor: 1, capturedMinor: 0, currency: "USD")
            do {
                _ = try await ledger.changeAmount(ghost, to: 2, idempotencyKey: "k-ghost")
                Issue.record("an unknown hold changed")
            } catch let error as PaymentError {
                #expect(error.kind == .invalid)
            }
            // Releasing is idempotent.
            let second = try await ledger.authorize(Self.request("job_2:authorize", amount: 7_900))
            let released = try await ledger.cancel(second, idempotencyKey: "job_2:cancel")
            #expect(released.status == .cancelled && released.amountMinor == 0)
            #expect(try await ledger.cancel(released, idempotencyKey: "job_2:cancel-again").status == .cancelled)
        }
    }

    /// Ten concurrent authorisations with one key (a client retrying through a flaky network)
    /// make one hold.
    @Test(arguments: TestEngine.allCases)
    func concurrentRetriesWithOneKeyMakeOneHold(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { db in
            let ledger = LedgerGateway(database: db, clock: SystemClock())
            let results = try await withThrowingTaskGroup(of: HoldState.self) { group in
                for _ in 0..<10 { group.addTask { try await ledger.authorize(Self.request("job_9:authorize")) } }
                return try await group.reduce(into: [HoldState]()) { $0.append($1) }
            }
            #expect(Set(results.map(\.reference)).count == 1)
            let holds = try await db.withConnection { conn in
                try await conn.raw("SELECT COUNT(*) AS n FROM ledger_holds").first()?.decode(column: "n", as: Int.self)
            }
            #expect(holds == 1)
        }
    }
}
