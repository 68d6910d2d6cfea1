import AsyncHTTPClient
import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOHTTP1

extension StripeGateway {
    public func changeAmount(_ hold: HoldState, to amountMinor: Int64, reason: String, idempotencyKey: String) async throws -> HoldState {
        guard hold.status == .authorized else { throw Self.closed() }
        guard amountMinor > 0 else { throw PaymentError(.invalid, "The amount must be positive.") }
        let path = try Self.path(hold.reference, nil)
        guard amountMinor > hold.authorizedMinor else {
            try await annotate(path, reason: reason, idempotencyKey: idempotencyKey)
            var lowered = hold
            lowered.amountMinor = amountMinor
            return lowered
        }
        var form = StripeForm()
        form.add("amount", amountMinor)
        let intent: StripePaymentIntent
        do {
            intent = try await post(path + "/increment_authorization", form, idempotencyKey: idempotencyKey, operation: "increment_authorization")
        } catch let error as PaymentError where error.kind == .invalid && error.providerCode != "idempotency_error" {
            // Not every card and merchant can be incremented; Stripe says which on the charge
            // (`incremental_authorization.status`). Where it cannot, Stripe's documented way is
            // a new authorisation for the whole new amount, then releasing the old one.
            // A cancelled intent here is one this change already replaced (a retry: the calls
            // below replay) or one that lapsed, which a new authorisation replaces as well.
            let current = try await retrieve(path)
            guard ["requires_capture", "canceled"].contains(current.status), current.incrementalAuthorization != "available" else { throw error }
            return try await reauthorize(current, to: amountMinor, reason: reason, currency: hold.currency, idempotencyKey: idempotencyKey)
        }
        var raised = try holdState(intent, currency: hold.currency)
        if raised.status == .authorized { raised.amountMinor = min(amountMinor, raised.authorizedMinor) }
        try await annotate(path, reason: reason, idempotencyKey: idempotencyKey)
        return raised
    }

    /// Writes the price-adjustment design's `adjusted` and `reason` on the PaymentIntent (after the amount
    /// changed, so the metadata never claims a change that did not happen).
    private func annotate(_ path: String, reason: String, idempotencyKey: String) async throws {
        var form = StripeForm()
        form.add("metadata[adjusted]", "true")
        form.add("metadata[reason]", reason)
        _ = try await post(path, form, idempotencyKey: idempotencyKey + ":metadata", operation: "update_metadata")
    }

    /// The PaymentIntent with its latest charge, whose card details say whether it can be
    /// incremented.
    private func retrieve(_ path: String) async throws -> StripePaymentIntent {
        var request = HTTPClientRequest(url: baseURL + path + "?expand%5B%5D=latest_charge")
        request.method = .GET
        return try await send(request, operation: "retrieve", as: StripePaymentIntent.self)
    }

    /// A new authorisation for `amountMinor` on the same card, customer and metadata (plus
    /// `replaces`), then the old one released. Each call has its own key derived from the
    /// change's, so a retry after any failure replays what was done and finishes the rest.
    ///
    /// The card is charged a second time, which Stripe allows only for a card attached to the
    /// intent's customer: `authorize` attached it. A hold authorised before Herald kept
    /// customers has none; its user's customer is found (or created) and the card attached now,
    /// which Stripe refuses if the card was already used without one (a clear decline).
    private func reauthorize(
        _ current: StripePaymentIntent, to amountMinor: Int64, reason: String, currency: String, idempotencyKey: String
    ) async throws -> HoldState {
        guard var paymentMethod = current.paymentMethod, !paymentMethod.isEmpty else {
            throw PaymentError(.invalid, "The card cannot take a higher amount and its payment method is unknown.")
        }
        var customer: String? = current.customer.flatMap { $0.isEmpty ? nil : $0 }
        if customer == nil, let userID = current.metadata?["customer_id"], !userID.isEmpty {
            let found = try await self.customer(for: userID)
            paymentMethod = try await attach(paymentMethod, to: found, idempotencyKey: idempotencyKey + ":attach")
            customer = found
        }
        var form = StripeForm()
        form.add("amount", amountMinor)
        form.add("currency", currency.lowercased())
        form.add("capture_method", "manual")
        form.add("confirm", "true")
        form.add("payment_method", paymentMethod)
        if let customer { form.add("customer", customer) }
        form.add("payment_method_types[]", "card")
        form.add("payment_method_options[card][request_incremental_authorization]", "if_available")
        let replaced: Set<String> = ["adjusted", "reason", "replaces"]
        for (key, value) in (current.metadata ?? [:]).sorted(by: { $0.key < $1.key }) where !replaced.contains(key) {
            form.add("metadata[\(key)]", value)
        }
        form.add("metadata[adjusted]", "true")
        form.add("metadata[reason]", reason)
        form.add("metadata[replaces]", current.id)
        let intent = try await post("/v1/payment_intents", form, idempotencyKey: idempotencyKey + ":reauthorize", operation: "reauthorize")
        let state = try authorization(intent, currency: currency)
        if current.status == "requires_capture" {
            _ = try await post(try Self.path(current.id, "cancel"), StripeForm(), idempotencyKey: idempotencyKey + ":release", operation: "cancel")
        }
        logger.info(
            "Stripe could not increment the authorisation; re-authorised and released the old one",
            metadata: [
                "stripe.intent": loggable(intent.id), "stripe.replaced": loggable(current.id),
            ])
        return state
    }
}
