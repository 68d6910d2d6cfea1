import Foundation
import HeraldCore
import Testing

@testable import HeraldRealtime

/// What a backend's publish says, read straight from the request's bytes: the fields and
/// their defaults, the payload written back as the bus carries it, and every wrong field
/// named (with its place in a batch).
@Suite struct PublicationTests {
    static func read(_ text: String, maxPayload: Int = 1_000) throws -> Publication {
        try Publication.read(body: Data(text.utf8), maxPayload: maxPayload)
    }

    static func readBatch(_ text: String, maxPayload: Int = 1_000) throws -> [Publication] {
        try Publication.readBatch(body: Data(text.utf8), maxPayload: maxPayload)
    }

    /// The fields a 422 names, in order.
    static func fields(_ body: () throws -> Any) -> [String] {
        do {
            _ = try body()
            return []
        } catch let error as APIError {
            guard error.code == .validationFailed, case .object(let details)? = error.details, case .array(let fields)? = details["fields"] else {
                return ["not a validation error: \(error.code.rawValue)"]
            }
            return fields.compactMap { $0["field"]?.stringValue }
        } catch {
            return ["\(error)"]
        }
    }

    @Test func aPublicationIsReadWithItsDefaults() throws {
        let full = try Self.read(#"{"room":"trip:tr_1","event":"moved","payload":{"b":[1,2.5,"x"],"a":null},"persist":false,"extra":1}"#)
        #expect(full == Publication(room: "trip:tr_1", event: "moved", payloadJSON: #"{"a":null,"b":[1,2.5,"x"]}"#, persist: false))
        // No payload is a null one; no persist (or a null one) persists.
        #expect(try Self.read(#"{"room":"user:7","event":"hi"}"#) == Publication(room: "user:7", event: "hi", payloadJSON: "null", persist: true))
        #expect(try Self.read(#" {"room":"user:7","event":"hi","persist":null} "#).persist)
        // Text comes back as JSON text, escapes and all; numbers as JavaScript writes them.
        let text = try Self.read(#"{"room":"r","event":"e","payload":{"s":"quote \" slash \\ tab \t snow \u2603","n":1.0,"big":1e21}}"#)
        #expect(text.payloadJSON == #"{"big":1e+21,"n":1,"s":"quote \" slash \\ tab \t snow ☃"}"#)
    }

    @Test func everyWrongFieldIsNamed() throws {
        #expect(Self.fields { try Self.read(#"{"payload":1}"#) } == ["room", "event"])
        #expect(Self.fields { try Self.read(#"{"room":null,"event":5,"persist":"yes"}"#) } == ["room", "event", "persist"])
        #expect(Self.fields { try Self.read(#"{"room":"has space","event":"connect"}"#) } == ["room", "event"])
        #expect(Self.fields { try Self.read(#"{"room":"","event":"two words"}"#) } == ["room", "event"])
        #expect(Self.fields { try Self.read(#"{"room":"$control","event":"e"}"#) } == ["room"], "the hub's own rooms are not a backend's")
        #expect(Self.fields { try Self.read(#"{"room":"\#(String(repeating: "r", count: 201))","event":"e"}"#) } == ["room"])
        #expect(Self.fields { try Self.read(#"{"room":"r","event":"\#(String(repeating: "e", count: 101))"}"#) } == ["event"])
        #expect(Self.fields { try Self.read(#"{"room":"r","event":"e","payload":"\#(String(repeating: "p", count: 20))"}"#, maxPayload: 21) } == ["payload"])
        #expect(Self.fields { try Self.read(#"{"room":"r","event":"e","payload":"\#(String(repeating: "p", count: 19))"}"#, maxPayload: 21) } == [])
        #expect(Self.fields { try Self.read(#"["room"]"#) } == ["body"])
    }

    @Test func textThatIsNotJSONIsInvalidJSON() {
        for text in ["", "{", #"{"room":"r","event":"e",}"#, #"{"room":"r"} x"#, "\u{FF}"] {
            #expect(throws: APIError.invalidJSON()) { try Self.read(text) }
        }
    }

    @Test func aBatchIsReadInOrderAndRefusedWholeWhenAnyEventIsWrong() throws {
        let batch = try Self.readBatch(
            #"{"events":[{"room":"user:1","event":"a","payload":1},{"room":"user:2","event":"b","persist":false},{"room":"user:1","event":"c"}]}"#)
        #expect(batch.map(\.room) == ["user:1", "user:2", "user:1"])
        #expect(batch.map(\.event) == ["a", "b", "c"])
        #expect(batch.map(\.persist) == [true, false, true])
        #expect(batch.first?.payloadJSON == "1")
        #expect(
            Self.fields { try Self.readBatch(#"{"events":[{"room":"ok","event":"a"},{"room":"bad room","event":"a"},5,{"event":"disconnect"}]}"#) }
                == ["events[1].room", "events[2]", "events[3].room", "events[3].event"])
        #expect(Self.fields { try Self.readBatch("{}") } == ["events"])
        #expect(Self.fields { try Self.readBatch(#"{"events":{}}"#) } == ["events"])
        #expect(Self.fields { try Self.readBatch(#"{"events":[]}"#) } == ["events"])
        #expect(Self.fields { try Self.readBatch("[]") } == ["body"])
        let one = #"{"room":"r","event":"e"}"#
        let most = "{\"events\":[" + Array(repeating: one, count: Publication.batchLimit).joined(separator: ",") + "]}"
        #expect(try Self.readBatch(most).count == Publication.batchLimit)
        let tooMany = "{\"events\":[" + Array(repeating: one, count: Publication.batchLimit + 1).joined(separator: ",") + "]}"
        #expect(Self.fields { try Self.readBatch(tooMany) } == ["events"])
    }

    /// The native WebSocket hands its messages over already parsed: the same rules apply.
    @Test func aParsedMessageFollowsTheSameRules() throws {
        let message: [String: JSONValue] = ["type": "publish", "ref": "r1", "room": "user:9", "event": "e", "payload": ["k": [true]]]
        #expect(try Publication.read(message, maxPayload: 100) == Publication(room: "user:9", event: "e", payloadJSON: #"{"k":[true]}"#))
        #expect(Self.fields { try Publication.read(["type": "publish", "room": "x y"], maxPayload: 100) } == ["room", "event"])
        #expect(Self.fields { try Publication.readBatch(nil, maxPayload: 100) } == ["events"])
        #expect(
            Self.fields { try Publication.readBatch(["events": [["room": "a", "event": "e"], ["room": 1]]]["events"], maxPayload: 100) } == [
                "events[1].room", "events[1].event",
            ])
    }
}
