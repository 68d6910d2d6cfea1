/// Compact JSON serialisation into a byte buffer, byte-compatible with `JSON.stringify` for
/// strings (same escapes) and deterministic (object keys sorted).
///
/// Why our own: `JSONEncoder` is slow for the hot paths (every emitted event, every push
/// payload), cannot write Socket.IO placeholders, and formats some numbers differently from
/// the JavaScript peers.
public struct JSONWriter: Sendable {
    public var bytes: [UInt8] = []

    public init(capacity: Int = 64) {
        bytes.reserveCapacity(capacity)
    }

    public var string: String { String(decoding: bytes, as: UTF8.self) }

    @inlinable
    public mutating func ascii(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    public mutating func write(_ value: JSONValue) {
        switch value {
        case .null: ascii("null")
        case .bool(let flag): flag ? ascii("true") : ascii("false")
        case .number(let number): write(number: number)
        case .string(let text): write(string: text)
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(element)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let object):
            bytes.append(UInt8(ascii: "{"))
            for (index, entry) in object.sorted(by: { $0.key < $1.key }).enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                write(string: entry.key)
                bytes.append(UInt8(ascii: ":"))
                write(entry.value)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    /// Whole numbers in Int64 range without a fraction; other finite numbers in Swift's shortest
    /// round-trip form (valid JSON, e.g. `0.1`, `1e+21`, `5e-324`); NaN and infinities as `null`,
    /// like `JSON.stringify`.
    public mutating func write(number: Double) {
        guard number.isFinite else {
            ascii("null")
            return
        }
        if number >= -9.223_372_036_854_775_808e18, number < 9.223_372_036_854_775_808e18, number.rounded(.towardZero) == number {
            write(integer: Int64(number))
        } else {
            bytes.append(contentsOf: number.description.utf8)
        }
    }

    public mutating func write(integer: Int64) {
        if integer >= 0, integer < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(integer))
            return
        }
        var magnitude = integer.magnitude
        if integer < 0 { bytes.append(UInt8(ascii: "-")) }
        // 20 digits hold UInt64.max.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { buffer in
            var position = 20
            repeat {
                position -= 1
                buffer[position] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[position..<20]))
        }
    }

    private static let hex: [UInt8] = Array("0123456789abcdef".utf8)

    /// Quoted and escaped like `JSON.stringify`: `\"`, `\\`, `\b \f \n \r \t`, other controls
    /// below U+0020 as `\u00XX`; everything else (including `/` and non-ASCII) verbatim.
    public mutating func write(string: String) {
        bytes.append(UInt8(ascii: "\""))
        var text = string
        text.withUTF8 { input in
            var runStart = 0
            for index in 0..<input.count {
                let byte = input[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if runStart < index {
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStart..<index]))
                }
                runStart = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    ascii("u00")
                    bytes.append(Self.hex[Int(byte >> 4)])
                    bytes.append(Self.hex[Int(byte & 0x0F)])
                }
            }
            if runStart < input.count {
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStart...]))
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
