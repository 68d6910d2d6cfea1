import Foundation
import Testing

@testable import HeraldRealtime

/// How the PostgreSQL bus packs ephemeral notices into notifications: in order, none lost or
/// doubled, no notification past the payload limit, a lone notice sent as itself.
@Suite struct NoticePackingTests {
    static func notice(_ index: Int, padding: Int) -> String {
        PostgresBus.encode(
            PostgresBus.Notice(r: "user:\(index)", s: nil, e: "tick", p: "\"" + String(repeating: "x", count: padding) + "\"", t: Int64(index)))
    }

    @Test func noticesAreKeptInOrderWithinTheLimit() throws {
        let notices = (0..<300).map { Self.notice($0, padding: ($0 * 37) % 900) }
        let payloads = PostgresBus.pack(notices)
        #expect(payloads.count > 1 && payloads.count < notices.count)
        #expect(payloads.allSatisfy { $0.utf8.count <= PostgresBus.inlineLimit })
        let decoder = JSONDecoder()
        var unpacked: [PostgresBus.Notice] = []
        for payload in payloads {
            if payload.hasPrefix("[") {
                unpacked += try decoder.decode([PostgresBus.Notice].self, from: Data(payload.utf8))
            } else {
                unpacked.append(try decoder.decode(PostgresBus.Notice.self, from: Data(payload.utf8)))
            }
        }
        let original = try notices.map { try decoder.decode(PostgresBus.Notice.self, from: Data($0.utf8)) }
        // (Compared field by field: the encoder's key order is not fixed.)
        #expect(unpacked.count == original.count)
        #expect(unpacked == original, "the notices came back reordered, lost or changed")
    }

    @Test func aLoneNoticeOrOneNearTheLimitTravelsAsItself() throws {
        let one = Self.notice(1, padding: 10)
        #expect(PostgresBus.pack([one]) == [one])
        let large = Self.notice(2, padding: PostgresBus.inlineLimit - 75)
        // Still a notice that travels inline, but too large to share a notification with `one`.
        #expect(large.utf8.count <= PostgresBus.inlineLimit && large.utf8.count + one.utf8.count + 3 > PostgresBus.inlineLimit)
        #expect(PostgresBus.pack([one, large, one]) == [one, large, one], "a notice that does not fit beside the others travels alone")
        #expect(PostgresBus.pack([]).isEmpty)
    }
}
