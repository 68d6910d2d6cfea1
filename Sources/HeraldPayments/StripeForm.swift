/// A Stripe request body: `application/x-www-form-urlencoded`, nested fields in Stripe's
/// bracket syntax (`metadata[job_id]`, `payment_method_types[]`).
///
/// Why our own encoder: Foundation's query encoders leave `+`, `&`, `=` and brackets as they
/// are in some positions (they target URLs, not form bodies), and a `+` left bare in a job id
/// reaches Stripe as a space. Here every byte outside RFC 3986's unreserved set is
/// percent-encoded, names included, which every form decoder reads back unchanged.
struct StripeForm: Sendable, Equatable {
    struct Field: Sendable, Equatable {
        var name: String
        var value: String
    }

    /// In the order added; repeated names (`payment_method_types[]`) are kept.
    private(set) var fields: [Field] = []

    mutating func add(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    mutating func add(_ name: String, _ value: Int64) {
        add(name, String(value))
    }

    /// The body bytes, as text (ASCII only).
    var encoded: String {
        fields.map { Self.percentEncode($0.name) + "=" + Self.percentEncode($0.value) }.joined(separator: "&")
    }

    static func percentEncode(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                out += "%"
                out.unicodeScalars.append(hexDigit(byte >> 4))
                out.unicodeScalars.append(hexDigit(byte & 0x0F))
            }
        }
        return out
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> Unicode.Scalar {
        Unicode.Scalar(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "A") + nibble - 10)
    }
}
