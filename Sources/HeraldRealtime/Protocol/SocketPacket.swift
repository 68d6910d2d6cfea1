import HeraldCore

public enum SocketPacketType: Int, Sendable {
    case connect = 0
    case disconnect = 1
    case event = 2
    case ack = 3
    case connectError = 4
    case binaryEvent = 5
    case binaryAck = 6
}

/// One Socket.IO v5 packet (carried inside an Engine.IO `message`).
public struct SocketPacket: Sendable, Equatable {
    /// When encoding, `.event`/`.ack` with binary inside `data` are sent as `binaryEvent`/`binaryAck` automatically.
    public var type: SocketPacketType
    /// `"/"` by default.
    public var namespace: String
    /// Acknowledgement id.
    public var id: Int?
    /// EVENT/ACK: `.array`; CONNECT: object or nil; CONNECT_ERROR: object or string; DISCONNECT: nil.
    public var data: SocketValue?

    public init(type: SocketPacketType, namespace: String = "/", id: Int? = nil, data: SocketValue? = nil) {
        self.type = type
        self.namespace = namespace
        self.id = id
        self.data = data
    }
}

public enum SocketProtocolError: Error, Sendable, Equatable {
    case malformed(String)
    case unexpectedBinary
    case tooManyAttachments
}

/// Writes Socket.IO packets in the default parser's text format:
/// `<type>[<attachments>-][<namespace>,][<ack id>][<JSON payload>]` plus binary attachments.
public enum SocketPacketEncoder {
    /// Returns the text frame and the binary attachments (in placeholder order).
    ///
    /// Binary values inside `data` of an event or ack are replaced by `{"_placeholder":true,"num":N}`
    /// and the type becomes `binaryEvent`/`binaryAck` with the `N-` attachment count prefix. The
    /// namespace `"/"` (or empty) is omitted; others are written `"/nsp,"`. Object keys are sorted.
    /// Binary inside CONNECT/DISCONNECT/CONNECT_ERROR data (which cannot carry attachments) is
    /// written as `{"type":"Buffer","data":[...]}`, as `JSON.stringify` writes a Node.js Buffer.
    public static func encode(_ packet: SocketPacket) -> (text: String, attachments: [[UInt8]]) {
        var type = packet.type
        let binaryCount = packet.data.map(countBinary) ?? 0
        if binaryCount > 0 {
            if type == .event { type = .binaryEvent }
            if type == .ack { type = .binaryAck }
        }
        let placeholders = type == .binaryEvent || type == .binaryAck
        var attachments: [[UInt8]] = []
        if placeholders { attachments.reserveCapacity(binaryCount) }

        var writer = JSONWriter(capacity: 32 + packet.namespace.utf8.count)
        writer.bytes.append(UInt8(ascii: "0") &+ UInt8(type.rawValue))
        if placeholders {
            writer.write(integer: Int64(binaryCount))
            writer.bytes.append(UInt8(ascii: "-"))
        }
        writeNamespace(packet.namespace, into: &writer)
        if let id = packet.id { writer.write(integer: Int64(id)) }
        if let data = packet.data {
            writer.write(data, placeholders: placeholders, attachments: &attachments)
        }
        return (writer.string, attachments)
    }

    /// Fast path for broadcasts: the EVENT packet text `2[/nsp,][id]["event",<argumentsJSON>]`
    /// from an already-encoded, comma-separated JSON argument list without brackets
    /// (e.g. `{"a":1}` or `"x",2`; empty for no arguments). The Engine.IO `"4"` prefix is the caller's.
    public static func eventText(namespace: String, event: String, argumentsJSON: String, ackID: Int? = nil) -> String {
        var writer = JSONWriter(capacity: 8 + namespace.utf8.count + event.utf8.count + argumentsJSON.utf8.count)
        writer.bytes.append(UInt8(ascii: "2"))
        writeNamespace(namespace, into: &writer)
        if let ackID { writer.write(integer: Int64(ackID)) }
        writer.bytes.append(UInt8(ascii: "["))
        writer.write(string: event)
        if !argumentsJSON.isEmpty {
            writer.bytes.append(UInt8(ascii: ","))
            writer.bytes.append(contentsOf: argumentsJSON.utf8)
        }
        writer.bytes.append(UInt8(ascii: "]"))
        return writer.string
    }

    /// Compact JSON text of a value (object keys sorted), for pre-encoding broadcast payloads once.
    public static func json(_ value: JSONValue) -> String {
        var writer = JSONWriter()
        writer.write(value)
        return writer.string
    }

    /// A JSON string literal: quoted and escaped.
    public static func jsonString(_ s: String) -> String {
        var writer = JSONWriter(capacity: s.utf8.count + 2)
        writer.write(string: s)
        return writer.string
    }

    private static func writeNamespace(_ namespace: String, into writer: inout JSONWriter) {
        guard !namespace.isEmpty, namespace != "/" else { return }
        writer.bytes.append(contentsOf: namespace.utf8)
        writer.bytes.append(UInt8(ascii: ","))
    }

    private static func countBinary(_ value: SocketValue) -> Int {
        switch value {
        case .binary: 1
        case .array(let values): values.reduce(0) { $0 + countBinary($1) }
        case .object(let object): object.values.reduce(0) { $0 + countBinary($1) }
        default: 0
        }
    }
}

/// Reads Socket.IO packets, validating them as socket.io-parser's decoder does, and reassembles
/// binary packets from their attachments.
///
/// Why strict: a malformed packet must end the connection (the official test suite checks it),
/// so every shape socket.io-parser rejects throws here.
public struct SocketPacketDecoder: Sendable {
    /// Text frames longer than this (in UTF-8 bytes) are malformed.
    static let maxTextBytes = 1_000_000
    /// Ack ids longer than this are malformed (15 digits always fit an Int and a JS safe integer).
    static let maxIDDigits = 15
    /// Event names socket.io-parser refuses, as they have a special meaning to the libraries.
    static let reservedEvents: Set<String> = [
        "connect", "connect_error", "disconnect", "disconnecting", "newListener", "removeListener",
    ]

    private struct Pending: Sendable {
        var packet: SocketPacket
        var expected: Int
        var buffers: [[UInt8]]
    }

    private let maxAttachments: Int
    private var pending: Pending?

    public init(maxAttachments: Int = 10) {
        self.maxAttachments = min(max(0, maxAttachments), 1_000_000)
    }

    /// True while a binary packet waits for more attachments.
    public var isAwaitingAttachments: Bool { pending != nil }

    /// Decodes a text frame. Returns the packet, or nil when it is a binary packet still waiting for
    /// attachments (feed the following binary frames to `add(attachment:)`).
    ///
    /// Throws `.malformed` for any invalid packet, including a text frame that arrives while
    /// attachments are still expected (the half-built packet is dropped), and
    /// `.tooManyAttachments` when the attachment count exceeds `maxAttachments`.
    public mutating func decode(text: String) throws(SocketProtocolError) -> SocketPacket? {
        if pending != nil {
            pending = nil
            throw .malformed("text frame received while waiting for binary attachments")
        }
        let utf8 = text.utf8
        guard utf8.count <= Self.maxTextBytes else { throw .malformed("packet exceeds \(Self.maxTextBytes) bytes") }
        let end = utf8.endIndex
        var index = utf8.startIndex
        guard index != end else { throw .malformed("empty packet") }

        let typeByte = utf8[index]
        guard let digit = Self.digit(typeByte), let type = SocketPacketType(rawValue: digit) else {
            throw .malformed("unknown packet type")
        }
        index = utf8.index(after: index)

        var attachmentCount = 0
        let isBinary = type == .binaryEvent || type == .binaryAck
        if isBinary {
            var digits = 0
            while index != end, let value = Self.digit(utf8[index]) {
                digits += 1
                if attachmentCount <= maxAttachments { attachmentCount = attachmentCount * 10 + value }
                index = utf8.index(after: index)
            }
            guard digits > 0, index != end, utf8[index] == UInt8(ascii: "-") else {
                throw .malformed("illegal attachment count")
            }
            guard attachmentCount <= maxAttachments else { throw .tooManyAttachments }
            index = utf8.index(after: index)
        }

        var namespace = "/"
        if index != end, utf8[index] == UInt8(ascii: "/") {
            let start = index
            while index != end, utf8[index] != UInt8(ascii: ",") {
                index = utf8.index(after: index)
            }
            // "/" and "," are ASCII, so these UTF-8 indices are character boundaries.
            namespace = String(text[start..<index])
            if index != end { index = utf8.index(after: index) }
        }

        var id: Int?
        if index != end, Self.digit(utf8[index]) != nil {
            var value = 0
            var digits = 0
            while index != end, let digit = Self.digit(utf8[index]) {
                digits += 1
                guard digits <= Self.maxIDDigits else { throw .malformed("ack id too long") }
                value = value * 10 + digit
                index = utf8.index(after: index)
            }
            id = value
        }

        var data: SocketValue?
        if index != end {
            data = try Self.parseJSON(text[index...])
        }
        try Self.validate(type: type, data: data)

        let packet = SocketPacket(type: type, namespace: namespace, id: id, data: data)
        guard isBinary else { return packet }
        if let data { try Self.checkPlaceholders(data, count: attachmentCount) }
        if attachmentCount == 0 { return packet }
        pending = Pending(packet: packet, expected: attachmentCount, buffers: [])
        return nil
    }

    /// Feeds one binary attachment; after the last one returns the completed packet (placeholders
    /// replaced by `.binary`, type kept as `binaryEvent`/`binaryAck`), before that nil.
    /// Throws `.unexpectedBinary` when no attachment is expected.
    public mutating func add(attachment: [UInt8]) throws(SocketProtocolError) -> SocketPacket? {
        guard var current = pending else { throw .unexpectedBinary }
        current.buffers.append(attachment)
        guard current.buffers.count == current.expected else {
            pending = current
            return nil
        }
        pending = nil
        var packet = current.packet
        packet.data = packet.data.map { Self.reconstruct($0, buffers: current.buffers) }
        return packet
    }

    // MARK: - Helpers

    @inline(__always)
    private static func digit(_ byte: UInt8) -> Int? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int(byte &- UInt8(ascii: "0")) : nil
    }

    private static func parseJSON(_ text: Substring) throws(SocketProtocolError) -> SocketValue {
        switch JSONParser.parse(text) {
        case .success(let value): return value
        case .failure(let failure): throw .malformed("invalid JSON payload: \(failure.reason)")
        }
    }

    /// The payload rules of socket.io-parser's `isPayloadValid`, except that an EVENT needs a
    /// string event name (socket.io-parser also lets a number through) and EVENT, ACK and
    /// CONNECT_ERROR need a payload.
    private static func validate(type: SocketPacketType, data: SocketValue?) throws(SocketProtocolError) {
        switch type {
        case .connect:
            switch data {
            case nil, .object?: return
            default: throw .malformed("CONNECT payload must be an object")
            }
        case .disconnect:
            guard data == nil else { throw .malformed("DISCONNECT takes no payload") }
        case .connectError:
            switch data {
            case .object?, .string?: return
            default: throw .malformed("CONNECT_ERROR payload must be an object or a string")
            }
        case .event, .binaryEvent:
            guard case .array(let values)? = data else { throw .malformed("EVENT payload must be an array") }
            guard case .string(let name)? = values.first else { throw .malformed("EVENT payload must start with the event name") }
            guard !reservedEvents.contains(name) else { throw .malformed("reserved event name \"\(name)\"") }
        case .ack, .binaryAck:
            guard case .array? = data else { throw .malformed("ACK payload must be an array") }
        }
    }

    /// An object whose `_placeholder` is `true` is a placeholder: its `num` must be a whole number
    /// naming one of the announced attachments.
    private static func checkPlaceholders(_ value: SocketValue, count: Int) throws(SocketProtocolError) {
        switch value {
        case .array(let values):
            for element in values { try checkPlaceholders(element, count: count) }
        case .object(let object):
            if object["_placeholder"] == .bool(true) {
                guard case .number(let number)? = object["num"], number.rounded(.towardZero) == number,
                    number >= 0, number < Double(count)
                else { throw .malformed("illegal attachment placeholder") }
                return
            }
            for element in object.values { try checkPlaceholders(element, count: count) }
        default:
            return
        }
    }

    private static func reconstruct(_ value: SocketValue, buffers: [[UInt8]]) -> SocketValue {
        switch value {
        case .array(let values):
            return .array(values.map { reconstruct($0, buffers: buffers) })
        case .object(let object):
            if object["_placeholder"] == .bool(true), case .number(let number)? = object["num"] {
                // Checked by `checkPlaceholders` when the text frame was decoded.
                return .binary(buffers[Int(number)])
            }
            return .object(object.mapValues { reconstruct($0, buffers: buffers) })
        default:
            return value
        }
    }
}
