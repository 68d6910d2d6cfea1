/// An object Stripe answers with.
protocol StripeObject: Decodable, Sendable {
    var id: String { get }
    /// Its state, for the debug log (a PaymentIntent's status).
    var loggedStatus: String? { get }
    /// What it is, for the log when an answer is not one.
    static var objectName: String { get }
}

/// The fields of a PaymentIntent that Herald reads.
struct StripePaymentIntent: StripeObject {
    var id: String
    var status: String
    var amount: Int64
    var amountCapturable: Int64?
    var amountReceived: Int64?
    var paymentMethod: String?
    var customer: String?
    var metadata: [String: String]?
    /// `available` or `unavailable` when `latest_charge` was expanded, else nil.
    var incrementalAuthorization: String?

    var loggedStatus: String? { status }
    static var objectName: String { "payment_intent" }

    enum CodingKeys: String, CodingKey {
        case id, status, amount, customer, metadata
        case amountCapturable = "amount_capturable"
        case amountReceived = "amount_received"
        case paymentMethod = "payment_method"
        case latestCharge = "latest_charge"
    }

    /// `latest_charge.payment_method_details.card.incremental_authorization.status`.
    struct Charge: Decodable {
        struct Details: Decodable {
            struct Card: Decodable {
                struct Incremental: Decodable { var status: String? }
                var incrementalAuthorization: Incremental?
                enum CodingKeys: String, CodingKey { case incrementalAuthorization = "incremental_authorization" }
            }
            var card: Card?
        }
        var paymentMethodDetails: Details?
        enum CodingKeys: String, CodingKey { case paymentMethodDetails = "payment_method_details" }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        status = try container.decode(String.self, forKey: .status)
        amount = try container.decode(Int64.self, forKey: .amount)
        amountCapturable = try container.decodeIfPresent(Int64.self, forKey: .amountCapturable)
        amountReceived = try container.decodeIfPresent(Int64.self, forKey: .amountReceived)
        // Ids unless expanded; Herald expands only the charge, so anything else is ignored.
        paymentMethod = try? container.decodeIfPresent(String.self, forKey: .paymentMethod)
        customer = try? container.decodeIfPresent(String.self, forKey: .customer)
        metadata = try? container.decodeIfPresent([String: String].self, forKey: .metadata)
        let charge = try? container.decodeIfPresent(Charge.self, forKey: .latestCharge)
        incrementalAuthorization = charge?.paymentMethodDetails?.card?.incrementalAuthorization?.status
    }
}

/// The Customer Herald creates for a user (`cus_…`); only its id is read.
struct StripeCustomer: StripeObject {
    var id: String
    var loggedStatus: String? { nil }
    static var objectName: String { "customer" }
}

/// A PaymentMethod (`pm_…`) and the customer it is attached to, if any.
struct StripePaymentMethod: StripeObject {
    var id: String
    var customer: String?

    var loggedStatus: String? { nil }
    static var objectName: String { "payment_method" }

    enum CodingKeys: String, CodingKey { case id, customer }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        // An id unless expanded, which Herald never asks for.
        customer = try? container.decodeIfPresent(String.self, forKey: .customer)
    }
}

/// `{"error": {...}}`, Stripe's error body.
struct StripeErrorEnvelope: Decodable, Sendable {
    struct Detail: Decodable, Sendable {
        var type: String?
        var code: String?
        var declineCode: String?
        var param: String?

        enum CodingKeys: String, CodingKey {
            case type, code, param
            case declineCode = "decline_code"
        }
    }

    var error: Detail
}
