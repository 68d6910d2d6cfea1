/// One Engine.IO v4 packet.
///
/// Why an enum with payloads: only `open`, `ping`, `pong` and `message` carry data in v4, and a
/// binary message is its own case because it travels differently (a WebSocket binary frame, or
/// `"b"` + base64 inside a polling payload) — so invalid combinations cannot be built.
public enum EnginePacket: Sendable, Equatable {
    /// Handshake JSON text (server → client).
    case open(String)
    case close
    /// Data may be `""` or `"probe"`.
    case ping(String)
    case pong(String)
    /// A text message (carries one Socket.IO packet).
    case message(String)
    /// A binary message (a Socket.IO attachment).
    case binary([UInt8])
    case upgrade
    case noop
}

public enum EngineProtocolError: Error, Sendable, Equatable {
    case emptyPacket
    case unknownPacketType(Character)
    case invalidBase64
    case tooManyPackets
    /// Not thrown by `EngineCodec` itself: the transports use it when a frame or body exceeds `maxPayload`.
    case payloadTooLarge
}

/// Encodes and decodes Engine.IO v4 packets and polling payloads.
///
/// Why hand-written byte handling: every outgoing message passes through here, so encoding
/// avoids Foundation formatting and intermediate copies beyond the one output string.
public enum EngineCodec {
    static let separator: UInt8 = 0x1E

    /// Text form for a WebSocket text frame or inside a polling payload (`"4hello"`, `"2probe"`, `"6"`).
    /// `.binary` is encoded as `"b"` + base64, the polling form (a WebSocket sends it as a binary frame instead).
    public static func encodeText(_ packet: EnginePacket) -> String {
        switch packet {
        case .open(let data): return prefixed("0", data)
        case .close: return "1"
        case .ping(let data): return prefixed("2", data)
        case .pong(let data): return prefixed("3", data)
        case .message(let data): return prefixed("4", data)
        case .upgrade: return "5"
        case .noop: return "6"
        case .binary(let bytes):
            var result = "b"
            result.reserveCapacity(1 + Base64.encodedLength(bytes.count))
            result += Base64.encode(bytes)
            return result
        }
    }

    @inline(__always)
    private static func prefixed(_ type: String, _ data: String) -> String {
        if data.isEmpty { return type }
        var result = type
        result.reserveCapacity(1 + data.utf8.count)
        result += data
        return result
    }

    /// Decodes a WebSocket text frame or one polling segment. A segment starting with `"b"` is base64
    /// binary (polling only) and decodes to `.binary`.
    ///
    /// Data after `close`, `upgrade` and `noop` is ignored, as engine.io-parser does.
    public static func decode(text: Substring) throws(EngineProtocolError) -> EnginePacket {
        let utf8 = text.utf8
        guard let first = utf8.first else { throw .emptyPacket }
        // The first byte is ASCII for every valid type, so the next UTF-8 index is a character boundary.
        let rest = { () -> String in String(text[utf8.index(after: utf8.startIndex)...]) }
        switch first {
        case UInt8(ascii: "0"): return .open(rest())
        case UInt8(ascii: "1"): return .close
        case UInt8(ascii: "2"): return .ping(rest())
        case UInt8(ascii: "3"): return .pong(rest())
        case UInt8(ascii: "4"): return .message(rest())
        case UInt8(ascii: "5"): return .upgrade
        case UInt8(ascii: "6"): return .noop
        case UInt8(ascii: "b"):
            guard let bytes = Base64.decode(utf8.dropFirst()) else { throw .invalidBase64 }
            return .binary(bytes)
        default:
            throw .unknownPacketType(text.first!)
        }
    }

    /// A WebSocket binary frame is always a binary message in v4.
    public static func decode(binaryFrame: [UInt8]) -> EnginePacket {
        .binary(binaryFrame)
    }

    /// Polling payload: packets joined by `"\u{1e}"`, binary as `"b"` + base64.
    public static func encodePayload(_ packets: [EnginePacket]) -> String {
        if packets.count == 1 { return encodeText(packets[0]) }
        let encoded = packets.map(encodeText)
        var total = max(0, encoded.count - 1)
        for part in encoded { total += part.utf8.count }
        var result = ""
        result.reserveCapacity(total)
        for (index, part) in encoded.enumerated() {
            if index > 0 { result.unicodeScalars.append("\u{1e}") }
            result += part
        }
        return result
    }

    /// Splits and decodes a polling POST body; throws on any bad segment (including an empty one,
    /// so an empty body or a trailing separator is an error). More than `maxPackets` segments throw
    /// `.tooManyPackets` before any segment beyond the limit is decoded.
    public static func decodePayload(_ body: String, maxPackets: Int = 1000) throws(EngineProtocolError) -> [EnginePacket] {
        var packets: [EnginePacket] = []
        let utf8 = body.utf8
        var start = utf8.startIndex
        var index = start
        while true {
            if index == utf8.endIndex || utf8[index] == separator {
                guard packets.count < maxPackets else { throw .tooManyPackets }
                packets.append(try decode(text: body[start..<index]))
                if index == utf8.endIndex { break }
                index = utf8.index(after: index)
                start = index
            } else {
                index = utf8.index(after: index)
            }
        }
        return packets
    }
}

/// Standard base64 (RFC 4648 §4) without Foundation.
enum Base64 {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    /// 0xFF marks a byte outside the alphabet.
    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    static func encodedLength(_ count: Int) -> Int { (count + 2) / 3 * 4 }

    static func encode(_ bytes: [UInt8]) -> String {
        let length = encodedLength(bytes.count)
        if length == 0 { return "" }
        return String(unsafeUninitializedCapacity: length) { out in
            alphabet.withUnsafeBufferPointer { table in
                bytes.withUnsafeBufferPointer { input in
                    var i = 0
                    var o = 0
                    let whole = input.count - input.count % 3
                    while i < whole {
                        let value = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                        out[o] = table[Int(value >> 18)]
                        out[o + 1] = table[Int(value >> 12 & 0x3F)]
                        out[o + 2] = table[Int(value >> 6 & 0x3F)]
                        out[o + 3] = table[Int(value & 0x3F)]
                        i += 3
                        o += 4
                    }
                    switch input.count - whole {
                    case 1:
                        let value = UInt32(input[i]) << 16
                        out[o] = table[Int(value >> 18)]
                        out[o + 1] = table[Int(value >> 12 & 0x3F)]
                        out[o + 2] = UInt8(ascii: "=")
                        out[o + 3] = UInt8(ascii: "=")
                    case 2:
                        let value = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                        out[o] = table[Int(value >> 18)]
                        out[o + 1] = table[Int(value >> 12 & 0x3F)]
                        out[o + 2] = table[Int(value >> 6 & 0x3F)]
                        out[o + 3] = UInt8(ascii: "=")
                    default:
                        break
                    }
                }
            }
            return length
        }
    }

    /// Decodes standard base64 with or without `=` padding; nil on any character outside the
    /// alphabet, misplaced padding, or an impossible length.
    static func decode<C: Collection>(_ text: C) -> [UInt8]? where C.Element == UInt8 {
        var chars = Array(text)
        var padding = 0
        while padding < 2, let last = chars.last, last == UInt8(ascii: "=") {
            chars.removeLast()
            padding += 1
        }
        if padding > 0, (chars.count + padding) % 4 != 0 { return nil }
        let remainder = chars.count % 4
        if remainder == 1 { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(chars.count / 4 * 3 + 2)
        return reverse.withUnsafeBufferPointer { table -> [UInt8]? in
            var accumulator: UInt32 = 0
            var bits = 0
            for char in chars {
                let value = table[Int(char)]
                if value == 0xFF { return nil }
                accumulator = accumulator << 6 | UInt32(value)
                bits += 6
                if bits >= 8 {
                    bits -= 8
                    output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                    accumulator &= (1 << UInt32(bits)) - 1
                }
            }
            return output
        }
    }
}
