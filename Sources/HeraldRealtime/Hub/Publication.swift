import Foundation
import HeraldCore

/// An event a backend asks to publish to a room: what `POST /realtime/publish` carries, each
/// event of its batch form, and a publisher's `publish` message on the native WebSocket.
///
/// Why read here, straight from the request's bytes: a small-room event (one delivery) costs
/// little more than its request, so the request's own cost decides the rate. The strict
/// parser builds the tree in one pass, the payload is written back to text once (the bus and
/// both protocols carry text), and no `Codable` decoder runs.
public struct Publication: Sendable, Equatable {
    public var room: String
    public var event: String
    /// The payload as compact JSON (the parsed value written back, keys sorted), as the bus
    /// and every protocol carry it.
    public var payloadJSON: String
    /// Stored with the room's next sequence number and replayable, or only delivered.
    public var persist: Bool

    public init(room: String, event: String, payloadJSON: String, persist: Bool = true) {
        self.room = room
        self.event = event
        self.payloadJSON = payloadJSON
        self.persist = persist
    }

    /// The most events one batch publish carries (the request's body limit applies too).
    public static let batchLimit = 1_000

    /// Whether a backend may publish to `room`: 1 to 200 bytes of printable characters, no
    /// spaces, not starting with `$` (the hub's own rooms, such as its membership commands).
    public static func isValidRoom(_ room: String) -> Bool {
        (1...200).contains(room.utf8.count) && !room.hasPrefix("$") && room.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value != 0x7F }
    }

    /// One publication from a request body `{"room", "event", "payload", "persist"}`: 400
    /// `INVALID_JSON` for text that is not JSON, 422 `VALIDATION_FAILED` naming every field
    /// that is wrong.
    public static func read(body: Data, maxPayload: Int) throws -> Publication {
        var validator = FieldValidator()
        let result = body.withUnsafeBytes { raw in
            JSONParser.read(bytes: raw.bindMemory(to: UInt8.self)) { (parser: inout JSONParser) throws(JSONParser.Failure) -> Publication? in
                try readPublication(&parser, at: { "" }, maxPayload: maxPayload, into: &validator)
            }
        }
        guard case .success(let publication) = result else { throw APIError.invalidJSON() }
        try validator.validate()
        guard let publication else { throw APIError.validation(field: "body", "must be an object") }
        return publication
    }

    /// A batch from a request body `{"events": [publication, …]}`: every event is checked
    /// before any is published, and the errors name each one's place (`events[3].room`).
    public static func readBatch(body: Data, maxPayload: Int) throws -> [Publication] {
        var batch = BatchReading()
        let result = body.withUnsafeBytes { raw in
            JSONParser.read(bytes: raw.bindMemory(to: UInt8.self)) { (parser: inout JSONParser) throws(JSONParser.Failure) -> Bool in
                guard parser.nextByte == UInt8(ascii: "{") else {
                    _ = try parser.readValue()
                    return false
                }
                try parser.readMembers { (parser: inout JSONParser, key: String) throws(JSONParser.Failure) in
                    guard key == "events" else {
                        _ = try parser.readValue()
                        return
                    }
                    // A repeated key counts once, the last (as a JSON object reads).
                    batch = BatchReading()
                    batch.present = true
                    guard parser.nextByte == UInt8(ascii: "[") else {
                        _ = try parser.readValue()
                        batch.isArray = false
                        return
                    }
                    try parser.readElements { (parser: inout JSONParser) throws(JSONParser.Failure) in
                        let index = batch.count
                        if let publication = try readPublication(&parser, at: { "events[\(index)]" }, maxPayload: maxPayload, into: &batch.validator) {
                            batch.publications.append(publication)
                        }
                        batch.count += 1
                    }
                }
                return true
            }
        }
        guard case .success(let isObject) = result else { throw APIError.invalidJSON() }
        guard isObject else { throw APIError.validation(field: "body", "must be an object") }
        return try batch.publications(count: batch.count)
    }

    /// A batch from a message already parsed (the native WebSocket's `publish` with `events`).
    public static func readBatch(_ events: JSONValue?, maxPayload: Int) throws -> [Publication] {
        var batch = BatchReading()
        batch.present = events != nil
        guard case .array(let elements)? = events else {
            batch.isArray = false
            return try batch.publications(count: 0)
        }
        for (index, element) in elements.enumerated() {
            guard case .object(let fields) = element else {
                batch.validator.fail("events[\(index)]", "must be an object")
                continue
            }
            if let publication = check(Members(fields), at: { "events[\(index)]" }, maxPayload: maxPayload, into: &batch.validator) {
                batch.publications.append(publication)
            }
        }
        return try batch.publications(count: elements.count)
    }

    /// One publication from a message already parsed (the native WebSocket's `publish`).
    public static func read(_ message: [String: JSONValue], maxPayload: Int) throws -> Publication {
        var validator = FieldValidator()
        let publication = check(Members(message), at: { "" }, maxPayload: maxPayload, into: &validator)
        try validator.validate()
        guard let publication else { throw APIError.validation(field: "body", "must be an object") }
        return publication
    }

    // MARK: Reading

    /// The members a publication is made of, as read (nil: absent).
    private struct Members {
        var room: SocketValue?
        var event: SocketValue?
        var payload: SocketValue?
        var persist: SocketValue?

        init() {}

        init(_ fields: [String: JSONValue]) {
            room = fields["room"].map(SocketValue.init)
            event = fields["event"].map(SocketValue.init)
            payload = fields["payload"].map(SocketValue.init)
            persist = fields["persist"].map(SocketValue.init)
        }
    }

    /// A batch being read: what it held, and what was wrong with it.
    private struct BatchReading {
        var present = false
        var isArray = true
        var count = 0
        var publications: [Publication] = []
        var validator = FieldValidator()

        /// The batch, or the error that refuses it whole.
        func publications(count: Int) throws -> [Publication] {
            guard present else { throw APIError.validation(field: "events", "is required") }
            guard isArray else { throw APIError.validation(field: "events", "must be an array") }
            guard (1...batchLimit).contains(count) else { throw APIError.validation(field: "events", "must hold 1 to \(batchLimit) events") }
            try validator.validate()
            return publications
        }
    }

    /// Reads the publication that comes next, its members one by one (no dictionary is
    /// built for it); nil when it is wrong, with each fault in `validator`.
    private static func readPublication(
        _ parser: inout JSONParser, at path: () -> String, maxPayload: Int, into validator: inout FieldValidator
    ) throws(JSONParser.Failure) -> Publication? {
        guard parser.nextByte == UInt8(ascii: "{") else {
            _ = try parser.readValue()
            let place = path()
            validator.fail(place.isEmpty ? "body" : place, "must be an object")
            return nil
        }
        var members = Members()
        try parser.readMembers { (parser: inout JSONParser, key: String) throws(JSONParser.Failure) in
            let value = try parser.readValue()
            switch key {
            case "room": members.room = value
            case "event": members.event = value
            case "payload": members.payload = value
            case "persist": members.persist = value
            default: break
            }
        }
        return check(members, at: path, maxPayload: maxPayload, into: &validator)
    }

    /// The publication `members` describe, checking each into `validator`; nil when any is
    /// wrong. `path` names the publication in errors ("" for the body itself); it is built
    /// only for an error.
    private static func check(_ members: Members, at path: () -> String, maxPayload: Int, into validator: inout FieldValidator) -> Publication? {
        func fail(_ name: String, _ message: String) {
            let place = path()
            validator.fail(place.isEmpty ? name : "\(place).\(name)", message)
        }
        var wrong = false
        let room = string(members.room, "room", fail)
        if let room, !isValidRoom(room) {
            fail("room", "must be 1 to 200 printable characters without spaces, not starting with $, like trip:tr_4e5f")
            wrong = true
        }
        let event = string(members.event, "event", fail)
        if let event {
            if !(1...100).contains(event.count) || event.contains(where: { $0.isWhitespace || $0.isNewline }) {
                fail("event", "must be 1 to 100 characters without spaces")
                wrong = true
            }
            if SocketPacketDecoder.reservedEvents.contains(event) {
                fail("event", "is reserved by Socket.IO")
                wrong = true
            }
        }
        var persist = true
        switch members.persist {
        case nil, .null?: break
        case .bool(let flag)?: persist = flag
        default:
            fail("persist", "must be a boolean")
            wrong = true
        }
        var writer = JSONWriter(capacity: 128)
        var attachments: [[UInt8]] = []
        writer.write(members.payload ?? .null, placeholders: false, attachments: &attachments)
        if writer.bytes.count > maxPayload {
            fail("payload", "must be at most \(maxPayload) bytes of JSON")
            wrong = true
        }
        guard !wrong, let room, let event else { return nil }
        return Publication(room: room, event: event, payloadJSON: writer.string, persist: persist)
    }

    private static func string(_ value: SocketValue?, _ name: String, _ fail: (String, String) -> Void) -> String? {
        switch value {
        case .string(let text)?: return text
        case nil: fail(name, "is required")
        case .null?: fail(name, "must not be null")
        default: fail(name, "must be a string")
        }
        return nil
    }
}
