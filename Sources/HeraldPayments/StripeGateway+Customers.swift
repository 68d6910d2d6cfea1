import AsyncHTTPClient
import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOHTTP1

extension StripeGateway {
    /// The user's Stripe Customer: the one saved, else one created now and saved.
    ///
    /// Created with an idempotency key derived from the user, so a retry, or another node
    /// creating the same user's customer at the same time, gets the same customer from Stripe
    /// (for as long as Stripe keeps keys, 24 hours); the directory keeps the first one saved
    /// whatever happens, so the user's cards always end up on one customer.
    func customer(for userID: String) async throws -> String {
        guard !userID.isEmpty else { throw PaymentError(.invalid, "The payment has no customer to keep the card for.") }
        if let saved = try await directory({ try await customers.customer(provider: provider, userID: userID) }) { return saved }
        var form = StripeForm()
        form.add("metadata[herald_user_id]", userID)
        let request = try postRequest("/v1/customers", form, idempotencyKey: try Self.customerKey(userID))
        let created = try await send(request, operation: "create_customer", as: StripeCustomer.self)
        guard Self.isStripeID(created.id) else {
            throw PaymentError(.unavailable, "The payment provider's answer could not be read.")
        }
        return try await directory({ try await customers.save(provider: provider, userID: userID, customerID: created.id) })
    }

    /// `herald-customer:{user id}`, the same for every creation of one user's customer.
    static func customerKey(_ userID: String) throws -> String {
        let key = "herald-customer:" + StripeForm.percentEncode(userID)
        guard key.utf8.count <= 255 else { throw PaymentError(.invalid, "The customer's id is too long for the payment provider.") }
        return key
    }

    /// Runs a call to the customer directory (the database): a failure there is a payment that
    /// could not be made yet, retried like an unreachable provider; its detail goes to the log.
    private func directory<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as PaymentError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.warning("reading or saving the payment customer failed", metadata: ["error": "\(String(reflecting: error))"])
            throw PaymentError(.unavailable, "The payment could not be prepared; try again shortly.")
        }
    }

    /// Makes sure the card is attached to `customer`; answers the PaymentMethod to charge.
    ///
    /// Why the card is read first: Stripe says whom it belongs to. One already on this customer
    /// is used as it is (Stripe refuses to attach a card twice, even to the same customer); one
    /// on nobody is attached now, before any PaymentIntent uses it, since a card used once
    /// without a customer can never be saved; one on another customer is refused here, as
    /// Stripe would refuse the payment. An attach Stripe refuses as a request is read again:
    /// another booking of the same user may have attached it meanwhile.
    ///
    /// The answer is the id Stripe gives the attached card: the same as asked for, except for
    /// Stripe's test-mode shorthands (`pm_card_visa`), which attach as a new PaymentMethod.
    func attach(_ paymentMethod: String, to customer: String, idempotencyKey: String) async throws -> String {
        let path = try Self.paymentMethodPath(paymentMethod)
        let card = try await retrievePaymentMethod(path)
        if card.customer == customer { return card.id }
        if card.customer != nil { throw Self.savedElsewhere(nil) }
        var form = StripeForm()
        form.add("customer", customer)
        let request = try postRequest(path + "/attach", form, idempotencyKey: idempotencyKey)
        switch try await answer(request, operation: "attach_payment_method", as: StripePaymentMethod.self) {
        case .object(let attached):
            guard attached.customer == nil || attached.customer == customer else { throw Self.savedElsewhere(nil) }
            return attached.id
        case .refused(let error, let status, let detail):
            // A refusal about the customer (one deleted at Stripe) is passed on as it is.
            guard status == 400, detail?.type == "invalid_request_error", detail?.param != "customer" else { throw error }
            let now = try await retrievePaymentMethod(path)
            if now.customer == customer { return now.id }
            if now.customer != nil { throw Self.savedElsewhere(error.providerCode) }
            throw PaymentError(
                .declined, "The card was used before without being saved and cannot be used again; add it again.",
                providerCode: error.providerCode)
        }
    }

    private func retrievePaymentMethod(_ path: String) async throws -> StripePaymentMethod {
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .GET
        return try await send(request, operation: "retrieve_payment_method", as: StripePaymentMethod.self)
    }

    private static func savedElsewhere(_ code: String?) -> PaymentError {
        PaymentError(.declined, "The card is saved to another customer's account; use a different card.", providerCode: code)
    }

    /// `/v1/payment_methods/{id}`, refusing ids that could change the path.
    private static func paymentMethodPath(_ id: String) throws -> String {
        guard isStripeID(id) else { throw PaymentError(.invalid, "The payment method is not a Stripe PaymentMethod id.") }
        return "/v1/payment_methods/\(id)"
    }

    /// A Stripe object id (`pm_…`, `cus_…`, `pi_…`): safe in a path and in a form.
    static func isStripeID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.count <= 255 && id.utf8.allSatisfy({ isWordByte($0, upperCase: true) })
    }
}
