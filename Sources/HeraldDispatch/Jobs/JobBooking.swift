import Foundation
import HeraldCore
import HeraldPayments
import HeraldRealtime
import HeraldStorage

/// Booking: a job is priced, its card held (or its hold scheduled, when it is booked past an
/// authorisation's lifetime), stored as `pending`, and offered at once.
///
/// Why the first round is also due in the database: if this node dies before broadcasting,
/// the scheduler on any node makes it.
public final class JobBooking: Sendable {
    let book: JobBook
    let rounds: JobOfferRounds
    let transitions: JobTransitions
    let pricing: PricingEngine
    let holds = HoldStore()

    init(book: JobBook, rounds: JobOfferRounds, transitions: JobTransitions, pricing: PricingEngine) {
        self.book = book
        self.rounds = rounds
        self.transitions = transitions
        self.pricing = pricing
    }

    var payments: JobPayments { transitions.payments }

    /// Books a job: prices it, stores it as `pending`, puts the customer's open sockets in its
    /// room and makes the first offer round. `answer` (an idempotent request's slot) gets the
    /// job as booked, in the booking's transaction.
    public func create(customerID: String, _ draft: JobDraft, answer: TransactionAnswer? = nil) async throws -> JobRecord {
        if payments.gateway.provider != "ledger" && draft.paymentMethodID == nil {
            throw APIError.validation(field: "payment_method_id", "is required: the card to hold the price on")
        }
        let nowDate = transitions.clock.now()
        let now = nowDate.epochMilliseconds
        let quote = pricing.quote(
            PricingRequest(items: draft.items, volumeHundredths: draft.volumeHundredths, scheduledAt: draft.scheduledAt, bookedAt: nowDate))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let job = JobRecord(
            id: Identifier.make("job"), customerID: customerID, driverID: nil, status: .pending, address: draft.address,
            latitude: draft.point?.latitude, longitude: draft.point?.longitude,
            items: String(decoding: try encoder.encode(draft.items), as: UTF8.self),
            volumeHundredths: draft.volumeHundredths.map(Int64.init), scheduledAt: draft.scheduledAt?.epochMilliseconds, notes: draft.notes,
            priceMinor: Int64(quote.totalMinor), currency: quote.currency, priceLines: String(decoding: try encoder.encode(quote.lines), as: UTF8.self),
            offerRound: 0, offerRadiusM: nil, nextRoundAt: now, version: 1, createdAt: now, updatedAt: now)
        if let holdAt = payments.timing.holdAt(scheduledAt: job.scheduledAt, now: now) {
            return try await bookAhead(job, paymentMethodID: draft.paymentMethodID, holdAt: holdAt, answer: answer)
        }
        // No hold, no job: the card is authorised first; if storing the job then fails, the
        // hold is released.
        let hold = try await payments.authorize(
            jobID: job.id, customerID: customerID, amountMinor: job.priceMinor, currency: job.currency, paymentMethodID: draft.paymentMethodID)
        do {
            try await book.database.transaction { db in
                try await self.book.store.insert(db, job)
                try await self.book.store.recordEvent(db, jobID: job.id, from: nil, to: .pending, actorID: customerID, actor: .customer, now: now)
                try await self.holds.insert(db, jobID: job.id, provider: self.payments.gateway.provider, hold, now: now)
                // An idempotent booking's answer commits with the job (the job as booked).
                try await answer?.record(job, in: db)
            }
        } catch {
            await payments.release(hold, jobID: job.id)
            throw error
        }
        return try await offer(job)
    }

    /// Books a job scheduled past an authorisation's lifetime: stored with a scheduled hold
    /// the payment scheduler takes at `holdAt` (or when the driver sets off, if sooner).
    private func bookAhead(_ job: JobRecord, paymentMethodID: String?, holdAt: Int64, answer: TransactionAnswer?) async throws -> JobRecord {
        let now = job.createdAt
        try await book.database.transaction { db in
            try await self.book.store.insert(db, job)
            try await self.book.store.recordEvent(db, jobID: job.id, from: nil, to: .pending, actorID: job.customerID, actor: .customer, now: now)
            try await self.holds.insertScheduled(
                db, jobID: job.id, provider: self.payments.gateway.provider, amountMinor: job.priceMinor, currency: job.currency,
                paymentMethod: paymentMethodID, customerID: job.customerID, holdAt: holdAt, now: now)
            try await answer?.record(job, in: db)
        }
        transitions.paymentsChanged.signal()
        return try await offer(job)
    }

    /// The customer's sockets join the job's room; the first round goes out.
    private func offer(_ job: JobRecord) async throws -> JobRecord {
        await transitions.notifier.addToRoom([job.customerID], RoomName.job(job.id))
        await rounds.run(job)
        return try await book.find(job.id) ?? job
    }
}
