import HeraldCore

extension PostgresBus {
    /// What one NOTIFY carries for one event (or one acknowledgement): short keys, since
    /// every node decodes every notice and a notification holds at most 8000 bytes.
    struct Notice: Codable, Equatable {
        var r: String  // room
        var s: Int64?  // seq
        var e: String?  // event name (inline only)
        var p: String?  // payload JSON (inline only)
        var t: Int64  // created at
        var a: String? = nil  // ack id of this delivery…
        var ak: String? = nil  // …and its kind (AckToken)
        var k: String? = nil  // an acknowledgement of the waiting publisher's ack id k (no event)
        var tp: String? = nil  // the publisher's traceparent (tracing on, in a trace)

        var ackToken: AckToken? {
            guard let a, let ak else { return nil }
            return AckToken(AckToken.Kind(rawValue: ak), id: a)
        }
    }

    /// The notice as JSON text.
    ///
    /// Why not `JSONEncoder`: every publish encodes one notice and every node decodes every
    /// notice; at small-room rates (one delivery per event) `Codable` was a visible share of
    /// an event's CPU on both ends. The text is the same JSON a `Codable` decoder reads.
    static func encode(_ notice: Notice) -> String {
        var writer = JSONWriter(capacity: 48 + notice.r.utf8.count + (notice.p?.utf8.count ?? 0) + (notice.e?.utf8.count ?? 0) + (notice.tp == nil ? 0 : 62))
        writer.ascii("{\"r\":")
        writer.write(string: notice.r)
        if let s = notice.s {
            writer.ascii(",\"s\":")
            writer.write(integer: s)
        }
        if let e = notice.e {
            writer.ascii(",\"e\":")
            writer.write(string: e)
        }
        if let p = notice.p {
            writer.ascii(",\"p\":")
            writer.write(string: p)
        }
        writer.ascii(",\"t\":")
        writer.write(integer: notice.t)
        if let a = notice.a {
            writer.ascii(",\"a\":")
            writer.write(string: a)
        }
        if let ak = notice.ak {
            writer.ascii(",\"ak\":")
            writer.write(string: ak)
        }
        if let k = notice.k {
            writer.ascii(",\"k\":")
            writer.write(string: k)
        }
        if let tp = notice.tp {
            writer.ascii(",\"tp\":")
            writer.write(string: tp)
        }
        writer.ascii("}")
        return writer.string
    }

    /// The notices of one notification (one object, or an array of them; see `pack`), nil
    /// when it is not what `encode` writes. Read member by member: no dictionary per notice.
    static func decodeNotices(_ payload: String) -> [Notice]? {
        var payload = payload
        return payload.withUTF8 { bytes in
            let result = JSONParser.read(bytes: bytes) { (parser: inout JSONParser) throws(JSONParser.Failure) -> [Notice] in
                guard parser.nextByte == UInt8(ascii: "[") else { return [try readNotice(&parser)] }
                var notices: [Notice] = []
                try parser.readElements { (parser: inout JSONParser) throws(JSONParser.Failure) in notices.append(try readNotice(&parser)) }
                return notices
            }
            return try? result.get()
        }
    }

    private static func readNotice(_ parser: inout JSONParser) throws(JSONParser.Failure) -> Notice {
        var notice = Notice(r: "", s: nil, e: nil, p: nil, t: 0)
        var hasRoom = false
        var hasTime = false
        func integer(_ value: SocketValue) throws(JSONParser.Failure) -> Int64 {
            guard case .number(let number) = value, let exact = Int64(exactly: number) else {
                throw JSONParser.Failure(reason: "a notice's seq and time are integers")
            }
            return exact
        }
        try parser.readMembers { (parser: inout JSONParser, key: String) throws(JSONParser.Failure) in
            let value = try parser.readValue()
            var text: String? {
                if case .string(let text) = value { return text }
                return nil
            }
            switch key {
            case "r":
                guard let text else { throw JSONParser.Failure(reason: "a notice's room is a string") }
                notice.r = text
                hasRoom = true
            case "t":
                notice.t = try integer(value)
                hasTime = true
            case "s": notice.s = value == .null ? nil : try integer(value)
            case "e": notice.e = text
            case "p": notice.p = text
            case "a": notice.a = text
            case "ak": notice.ak = text
            case "k": notice.k = text
            case "tp": notice.tp = text
            default: break
            }
        }
        guard hasRoom, hasTime else { throw JSONParser.Failure(reason: "a notice has a room and a time") }
        return notice
    }
}
