import Foundation
import HeraldCore
import Testing

@Suite struct JSONValueTests {
    @Test func roundTripsEveryKind() throws {
        let value: JSONValue = ["a": 1, "b": [true, .null, "x"], "c": 1.5, "d": ["e": "f"]]
        let data = try JSONEncoder().encode(value)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == value)
    }

    @Test func writesWholeNumbersWithoutAFraction() throws {
        let data = try JSONEncoder().encode(JSONValue.array([3, 2.5, -7]))
        #expect(String(decoding: data, as: UTF8.self) == "[3,2.5,-7]")
    }

    @Test func keepsBooleansApartFromNumbers() throws {
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data("[true, 1, 0]".utf8))
        #expect(decoded == [true, 1, 0])
    }
}

@Suite struct IdentifierAndTimestampTests {
    @Test func identifiersArePrefixedAndDistinct() {
        let ids = (0..<1000).map { _ in Identifier.make("req") }
        #expect(Set(ids).count == 1000)
        #expect(ids.allSatisfy { $0.hasPrefix("req_") && $0.count == 26 })
        #expect(Identifier.make("x", length: 7).count == 9)
        #expect(Identifier.make("x", length: 0) == "x_")
    }

    /// Every position draws every base-62 character about equally often (ten characters come
    /// from one draw: a digit extraction that repeats or skips would show here).
    @Test func everyPositionIsUniformOverTheAlphabet() {
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        let draws = 12_400
        var counts = [[Int]](repeating: [Int](repeating: 0, count: 62), count: 22)
        for _ in 0..<draws {
            for (position, character) in Identifier.make("t").dropFirst(2).enumerated() {
                counts[position][alphabet.firstIndex(of: character)!] += 1
            }
        }
        // 200 expected per cell; a cell outside 110...300 is about 7 standard deviations out.
        for position in 0..<22 {
            #expect(counts[position].allSatisfy { (110...300).contains($0) }, "position \(position): \(counts[position])")
        }
    }

    /// An app decoding with `JSONDecoder.DateDecodingStrategy.iso8601` (an
    /// `ISO8601DateFormatter` with its default options) refuses fractional seconds: every
    /// time Herald prints must decode there.
    @Test func timestampsAreISO8601UTCToTheSecondAndDecodeWithFoundationsDefaults() throws {
        let date = Date(epochMilliseconds: 1_763_000_000_123)
        let text = Timestamp.string(date)
        #expect(text == "2025-11-13T02:13:20Z")
        #expect(ISO8601DateFormatter().date(from: text)?.timeIntervalSince1970 == 1_763_000_000)
        #expect(ISO8601DateFormatter().date(from: "2025-11-13T02:13:20.123Z") == nil, "the formatter this guards against")
        // Herald still reads fractions a client sends.
        #expect(Timestamp.parse("2025-11-13T02:13:20.123Z")?.epochMilliseconds == 1_763_000_000_123)
        #expect(Timestamp.parse("2025-11-12T08:30:00+11:00")?.epochMilliseconds == 1_762_896_600_000)
        #expect(Timestamp.parse("yesterday") == nil)
    }
}

@Suite struct TimestampCalendarTests {
    /// Rounded down: a printed time sent back as a cursor is never later than the instant.
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00Z"),
        (Int64(951_782_400_000), "2000-02-29T00:00:00Z"),
        (Int64(-1), "1969-12-31T23:59:59Z"),
        (Int64(4_102_444_799_999), "2099-12-31T23:59:59Z"),
    ])
    func formatsCalendarEdges(ms: Int64, expected: String) {
        #expect(Timestamp.string(epochMilliseconds: ms) == expected)
    }

    @Test func agreesWithFoundationOverManyInstants() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let ms = Int64.random(in: 0...4_000_000_000_000, using: &generator)
            let reference = Date(timeIntervalSince1970: TimeInterval(ms / 1000)).formatted(Date.ISO8601FormatStyle())
            #expect(Timestamp.string(epochMilliseconds: ms) == reference)
        }
    }
}
