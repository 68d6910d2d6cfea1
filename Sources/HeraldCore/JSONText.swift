/// Compact JSON text for a `JSONValue`, written directly into a string.
///
/// Why not `JSONEncoder`: realtime publishing encodes a payload once per event, and frames
/// are built around that text; a direct writer is several times faster and its output is
/// stable (whole numbers without a fraction, `/` not escaped).
public enum JSONText {
    public static func encode(_ value: JSONValue) -> String {
        var out = ""
        out.reserveCapacity(64)
        write(value, into: &out)
        return out
    }

    public static func write(_ value: JSONValue, into out: inout String) {
        switch value {
        case .null: out += "null"
        case .bool(let flag): out += flag ? "true" : "false"
        case .number(let number): writeNumber(number, into: &out)
        case .string(let string): writeString(string, into: &out)
        case .array(let values):
            out += "["
            var first = true
            for element in values {
                if !first { out += "," }
                first = false
                write(element, into: &out)
            }
            out += "]"
        case .object(let object):
            out += "{"
            var first = true
            for (key, element) in object {
                if !first { out += "," }
                first = false
                writeString(key, into: &out)
                out += ":"
                write(element, into: &out)
            }
            out += "}"
        }
    }

    public static func writeNumber(_ number: Double, into out: inout String) {
        guard number.isFinite else {
            out += "null"
            return
        }
        if number.rounded() == number, abs(number) < 9.007_199_254_740_992e15 {
            out += String(Int64(number))
        } else {
            out += "\(number)"
        }
    }

    /// A JSON string literal with the required escapes.
    public static func quoted(_ string: String) -> String {
        var out = ""
        out.reserveCapacity(string.utf8.count + 2)
        writeString(string, into: &out)
        return out
    }

    public static func writeString(_ string: String, into out: inout String) {
        out += "\""
        // Fast path: most strings need no escaping at all.
        if !string.utf8.contains(where: { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }) {
            out += string
            out += "\""
            return
        }
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{08}": out += "\\b"
            case "\u{0C}": out += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
