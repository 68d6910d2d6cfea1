import Foundation
import Testing

@testable import HeraldRealtime

/// The PostgreSQL bus's notices, written and read without `Codable`: every field survives the
/// trip, the text is JSON that `Codable` reads the same way, and anything else is refused.
@Suite struct NoticeCodecTests {
    static let full = PostgresBus.Notice(
        r: "user:\"ann\"\\", s: 9_007_199_254_740_991, e: "ev\u{1}", p: #"{"a":"x\ny","b":[1,2]}"#, t: 1_764_000_000_123, a: "ack_1", ak: "notification",
        k: nil, tp: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")

    @Test func aNoticeComesBackAsItWasSent() throws {
        let sparse = PostgresBus.Notice(r: "trip:1", s: nil, e: nil, p: nil, t: 0)
        let ack = PostgresBus.Notice(r: "", s: nil, e: nil, p: nil, t: 5, k: "ack_9")
        for notice in [Self.full, sparse, ack] {
            let text = PostgresBus.encode(notice)
            #expect(PostgresBus.decodeNotices(text) == [notice])
            #expect(try JSONDecoder().decode(PostgresBus.Notice.self, from: Data(text.utf8)) == notice, "Codable reads the same notice")
        }
        let packed = PostgresBus.pack([Self.full, sparse, ack].map(PostgresBus.encode))
        #expect(packed.count == 1)
        #expect(PostgresBus.decodeNotices(packed[0]) == [Self.full, sparse, ack])
    }

    @Test func whatIsNotANoticeIsRefused() throws {
        for text in ["", "null", "[1]", #"{"t":1}"#, #"{"r":"x"}"#, #"{"r":"x","t":1.5}"#, #"{"r":"x","t":1,"s":2.5}"#, #"[{"r":"x","t":1},{}]"#, "{"] {
            #expect(PostgresBus.decodeNotices(text) == nil, "\(text)")
        }
        // A notice from a node without tracing (or from before it) has no trace context.
        #expect(PostgresBus.decodeNotices(#"{"r":"x","t":1}"#)?.first?.tp == nil)
        // A notice written by `Codable` (an older node during a rolling upgrade) still reads.
        let old = String(decoding: try JSONEncoder().encode(Self.full), as: UTF8.self)
        #expect(PostgresBus.decodeNotices(old) == [Self.full])
    }
}
