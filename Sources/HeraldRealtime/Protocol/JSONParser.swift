/// A strict RFC 8259 JSON parser producing `SocketValue` directly.
///
/// Why not Foundation's `JSONDecoder`: it accepts trailing commas (`["a",]`, which `JSON.parse`
/// and therefore socket.io-parser reject) and goes through `Codable` machinery with a decode
/// attempt per type per value; this parser accepts exactly the JSON grammar in one pass.
///
/// Semantics follow `JSON.parse` where Swift can represent the result: a duplicate key keeps the
/// last value; a lone UTF-16 surrogate escape (`"\ud83d"`, which JavaScript produces when a string
/// is cut inside an emoji) becomes U+FFFD. Departures: numbers that overflow to infinity are
/// rejected, and nesting deeper than `maxDepth` is rejected (bounded recursion).
struct JSONParser {
    struct Failure: Error {
        let reason: String
    }

    static let maxDepth = 512

    static func parse(_ text: Substring) -> Result<SocketValue, Failure> {
        if let result = text.utf8.withContiguousStorageIfAvailable({ parse(bytes: $0) }) {
            return result
        }
        return Array(text.utf8).withUnsafeBufferPointer { parse(bytes: $0) }
    }

    static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Result<SocketValue, Failure> {
        var parser = JSONParser(bytes: bytes)
        do throws(Failure) {
            parser.skipWhitespace()
            let value = try parser.parseValue()
            parser.skipWhitespace()
            guard parser.index == bytes.count else { throw Failure(reason: "unexpected data after the JSON value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    // MARK: - Reading member by member

    /// Reads `bytes` with `body`, which pulls what it needs with `readMembers`,
    /// `readElements` and `readValue`; fails unless the whole text was one JSON value.
    ///
    /// Why: the bus's notices and a backend's batch are objects of which a few members are
    /// taken; building a dictionary per object only to look four keys up was most of their
    /// parse (BENCHMARKS.md, issue 43). The grammar and its limits are the same.
    static func read<T>(bytes: UnsafeBufferPointer<UInt8>, _ body: (inout JSONParser) throws(Failure) -> T) -> Result<T, Failure> {
        var parser = JSONParser(bytes: bytes)
        do throws(Failure) {
            parser.skipWhitespace()
            let value = try body(&parser)
            parser.skipWhitespace()
            guard parser.index == bytes.count else { throw Failure(reason: "unexpected data after the JSON value") }
            return .success(value)
        } catch {
            return .failure(error)
        }
    }

    /// The first byte of the next value (`{`, `[`, `"`, …), nil at the end.
    var nextByte: UInt8? { index < bytes.count ? bytes[index] : nil }

    /// The next value, whole.
    mutating func readValue() throws(Failure) -> SocketValue {
        try parseValue()
    }

    /// The members of the object that comes next: `member` is called with each key, in
    /// order, and must read the member's value.
    mutating func readMembers(_ member: (inout JSONParser, String) throws(Failure) -> Void) throws(Failure) {
        guard nextByte == UInt8(ascii: "{") else { throw Failure(reason: "expected an object") }
        try enter()
        defer { depth -= 1 }
        index += 1  // {
        skipWhitespace()
        if nextByte == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            guard nextByte == UInt8(ascii: "\"") else { throw Failure(reason: "expected a string key") }
            let key = try parseString()
            skipWhitespace()
            guard nextByte == UInt8(ascii: ":") else { throw Failure(reason: "expected ':'") }
            index += 1
            skipWhitespace()
            try member(&self, key)
            skipWhitespace()
            guard let byte = nextByte else { throw Failure(reason: "unterminated object") }
            index += 1
            if byte == UInt8(ascii: "}") { return }
            guard byte == UInt8(ascii: ",") else { throw Failure(reason: "expected ',' or '}'") }
        }
    }

    /// The elements of the array that comes next: `element` is called for each, in order,
    /// and must read it.
    mutating func readElements(_ element: (inout JSONParser) throws(Failure) -> Void) throws(Failure) {
        guard nextByte == UInt8(ascii: "[") else { throw Failure(reason: "expected an array") }
        try enter()
        defer { depth -= 1 }
        index += 1  // [
        skipWhitespace()
        if nextByte == UInt8(ascii: "]") {
            index += 1
            return
        }
        while true {
            skipWhitespace()
            try element(&self)
            skipWhitespace()
            guard let byte = nextByte else { throw Failure(reason: "unterminated array") }
            index += 1
            if byte == UInt8(ascii: "]") { return }
            guard byte == UInt8(ascii: ",") else { throw Failure(reason: "expected ',' or ']'") }
        }
    }

    // MARK: - Grammar

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(Failure) -> SocketValue {
        guard index < bytes.count else { throw Failure(reason: "unexpected end of JSON") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return .number(try parseNumber())
        default:
            throw Failure(reason: "unexpected character in JSON")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw Failure(reason: "invalid literal") }
        let matches = literal.withUTF8Buffer { expected in
            for offset in 0..<count where bytes[index + offset] != expected[offset] { return false }
            return true
        }
        guard matches else { throw Failure(reason: "invalid literal") }
        index += count
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        guard depth <= Self.maxDepth else { throw Failure(reason: "JSON nested too deeply") }
    }

    private mutating func parseArray() throws(Failure) -> SocketValue {
        var elements: [SocketValue] = []
        try readElements { (parser: inout JSONParser) throws(Failure) in elements.append(try parser.parseValue()) }
        return .array(elements)
    }

    /// A duplicate key keeps the last value, as `JSON.parse` does.
    private mutating func parseObject() throws(Failure) -> SocketValue {
        var object: [String: SocketValue] = [:]
        try readMembers { (parser: inout JSONParser, key: String) throws(Failure) in object[key] = try parser.parseValue() }
        return .object(object)
    }

    /// Parses a string starting at its opening quote. The input comes from a Swift `String`, so
    /// it is valid UTF-8 and unescaped runs are copied as they are.
    private mutating func parseString() throws(Failure) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw Failure(reason: "control character in string") }
            index += 1
        }
        var output: [UInt8] = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: output, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw Failure(reason: "unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): output.append(escape)
                case UInt8(ascii: "b"): output.append(0x08)
                case UInt8(ascii: "f"): output.append(0x0C)
                case UInt8(ascii: "n"): output.append(0x0A)
                case UInt8(ascii: "r"): output.append(0x0D)
                case UInt8(ascii: "t"): output.append(0x09)
                case UInt8(ascii: "u"): appendScalar(try parseUnicodeEscape(), to: &output)
                default: throw Failure(reason: "invalid escape")
                }
            default:
                guard byte >= 0x20 else { throw Failure(reason: "control character in string") }
                output.append(byte)
            }
        }
        throw Failure(reason: "unterminated string")
    }

    /// After `\u`: four hex digits, joined with a following `\uDC00-\uDFFF` escape when they are a
    /// high surrogate; unpaired surrogates become U+FFFD.
    private mutating func parseUnicodeEscape() throws(Failure) -> Unicode.Scalar {
        let unit = try parseHex4()
        switch unit {
        case 0xD800...0xDBFF:
            if bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") {
                let saved = index
                index += 2
                let low = try parseHex4()
                if (0xDC00...0xDFFF).contains(low) {
                    let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                    return Unicode.Scalar(value)!
                }
                index = saved  // not a pair: the next escape stands alone
            }
            return "\u{FFFD}"
        case 0xDC00...0xDFFF:
            return "\u{FFFD}"
        default:
            return Unicode.Scalar(unit)!
        }
    }

    private mutating func parseHex4() throws(Failure) -> UInt16 {
        guard bytes.count - index >= 4 else { throw Failure(reason: "invalid \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Failure(reason: "invalid \\u escape")
            }
            value = value << 4 | UInt16(digit)
            index += 1
        }
        return value
    }

    private func appendScalar(_ scalar: Unicode.Scalar, to output: inout [UInt8]) {
        UTF8.encode(scalar) { output.append($0) }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    private mutating func parseNumber() throws(Failure) -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { throw Failure(reason: "invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < bytes.count, isDigit(bytes[index]) { throw Failure(reason: "leading zero in number") }
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw Failure(reason: "invalid fraction") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw Failure(reason: "invalid exponent") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
        // Fast path: up to 15 digits are exact in a Double.
        if isInteger, slice.count <= 16 {
            var negative = false
            var value: Int64 = 0
            var digits = 0
            for byte in slice {
                if byte == UInt8(ascii: "-") {
                    negative = true
                    continue
                }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                digits += 1
            }
            if digits <= 15 { return negative ? -Double(value) : Double(value) }
        }
        guard let value = Double(String(decoding: slice, as: UTF8.self)), value.isFinite else {
            throw Failure(reason: "number out of range")
        }
        return value
    }

    @inline(__always)
    private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }
}
