import AsyncHTTPClient
import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOHTTP1

extension StripeGateway {
    /// Sorts a Stripe error into final and retryable kinds.
    ///
    /// Order matters: credentials and overload come first whatever the body says (a proxy's
    /// 502 page has no Stripe body at all), then the one code that means "the hold moved on",
    /// then declines, then everything else the request got wrong.
    func classify(status: Int, detail: StripeErrorEnvelope.Detail?) -> PaymentError {
        let code = safeCode(detail?.code)
        switch status {
        case 401, 403:
            return PaymentError(.invalid, "The payment provider rejected Herald's credentials.", providerCode: code)
        case 409, 429, 500...:
            return PaymentError(.unavailable, "The payment provider is temporarily unavailable.", providerCode: code ?? safeCode(detail?.type))
        default:
            break
        }
        if code == "payment_intent_unexpected_state" { return Self.closed(code) }
        if status == 402 || detail?.type == "card_error" {
            let reason = safeCode(detail?.declineCode) ?? code
            if reason == "authentication_required" {
                return PaymentError(.declined, "The card needs the customer's authentication.", providerCode: reason)
            }
            return PaymentError(.declined, reason.map { "The card was declined (\($0))." } ?? "The card was declined.", providerCode: reason)
        }
        if detail?.type == "idempotency_error" {
            return PaymentError(
                .invalid, "The idempotency key was already used for a different payment request.",
                providerCode: code ?? "idempotency_error")
        }
        return PaymentError(
            .invalid, code.map { "The payment request was refused by the provider (\($0))." } ?? "The payment request was refused by the provider.",
            providerCode: code)
    }

    /// Stripe's codes are short snake_case words; anything else is not echoed to clients, nor
    /// anything that could be a key (`sk_…`, `rk_…`, or ours), whatever a body calls a code.
    func safeCode(_ code: String?) -> String? {
        guard let code, !code.isEmpty, code.utf8.count <= 64, !mayBeKey(code),
            code.utf8.allSatisfy({ Self.isWordByte($0, upperCase: false) })
        else { return nil }
        return code
    }

    /// What Stripe's answers say, for logs: ids, codes and parameter names pass, anything
    /// else (free text, a quoted key) is withheld.
    func loggable(_ value: String?) -> Logger.MetadataValue {
        guard let value else { return "-" }
        guard !value.isEmpty, value.utf8.count <= 128, !mayBeKey(value),
            value.utf8.allSatisfy({ Self.isWordByte($0, upperCase: true) || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") })
        else { return "(withheld)" }
        return "\(value)"
    }

    private func mayBeKey(_ value: String) -> Bool {
        (!secretKey.isEmpty && value.contains(secretKey)) || ["sk_", "rk_", "pk_"].contains(where: { value.lowercased().hasPrefix($0) })
    }

    static func isWordByte(_ byte: UInt8, upperCase: Bool) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): true
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): upperCase
        default: false
        }
    }
}
