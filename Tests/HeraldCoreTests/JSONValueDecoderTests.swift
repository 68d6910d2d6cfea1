import HeraldCore
import Testing

private struct Order: Decodable, Equatable {
    struct Item: Decodable, Equatable {
        let category: String
        let quantity: Int
    }
    let id: String
    let total: Int64
    let weight: Double
    let express: Bool
    let note: String?
    let items: [Item]
}

@Suite struct JSONValueDecoderTests {
    let decoder = JSONValueDecoder()

    @Test func decodesNestedTypes() throws {
        let value: JSONValue = ["id": "o1", "total": 1250, "weight": 2.5, "express": true, "items": [["category": "sofa", "quantity": 2]]]
        let order = try decoder.decode(Order.self, from: value)
        #expect(order == Order(id: "o1", total: 1250, weight: 2.5, express: true, note: nil, items: [.init(category: "sofa", quantity: 2)]))
    }

    func failure(_ value: JSONValue) -> DecodingError? {
        do {
            _ = try decoder.decode(Order.self, from: value)
            return nil
        } catch {
            return error as? DecodingError
        }
    }

    func path(_ error: DecodingError?) -> [String] {
        let context: DecodingError.Context?
        switch error {
        case .typeMismatch(_, let c)?, .valueNotFound(_, let c)?, .dataCorrupted(let c)?: context = c
        case .keyNotFound(let key, let c)?: return c.codingPath.map(\.stringValue) + [key.stringValue]
        default: context = nil
        }
        return context?.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue } ?? []
    }

    let valid: [String: JSONValue] = ["id": "o1", "total": 1, "weight": 1, "express": false, "items": []]

    @Test func aFractionWhereAnIntegerBelongsNamesTheField() {
        var value = valid
        value["items"] = [["category": "a", "quantity": 1.5]]
        let error = failure(.object(value))
        guard case .dataCorrupted? = error else {
            Issue.record("expected dataCorrupted, got \(String(describing: error))")
            return
        }
        #expect(path(error) == ["items", "[0]", "quantity"])
    }

    @Test func anOutOfRangeNumberIsRefused() {
        var value = valid
        value["items"] = [["category": "a", "quantity": 1e300]]
        #expect(path(failure(.object(value))) == ["items", "[0]", "quantity"])
    }

    @Test func wrongTypesMissingKeysAndNullsNameTheirPath() {
        var wrongType = valid
        wrongType["express"] = "yes"
        guard case .typeMismatch? = failure(.object(wrongType)) else {
            Issue.record("typeMismatch expected")
            return
        }
        #expect(path(failure(.object(wrongType))) == ["express"])

        var missing = valid
        missing["id"] = nil
        guard case .keyNotFound? = failure(.object(missing)) else {
            Issue.record("keyNotFound expected")
            return
        }
        #expect(path(failure(.object(missing))) == ["id"])

        var null = valid
        null["total"] = .null
        guard case .valueNotFound? = failure(.object(null)) else {
            Issue.record("valueNotFound expected")
            return
        }

        var nullOptional = valid
        nullOptional["note"] = .null
        #expect(failure(.object(nullOptional)) == nil)
    }

    @Test func integersConvertOnlyWhenExact() throws {
        #expect(try decoder.decode(Int64.self, from: 9_007_199_254_740_992) == 9_007_199_254_740_992)
        #expect(throws: DecodingError.self) { try decoder.decode(UInt8.self, from: 256) }
        #expect(throws: DecodingError.self) { try decoder.decode(UInt.self, from: -1) }
        #expect(try decoder.decode([Int].self, from: [1, 2, 3]) == [1, 2, 3])
    }
}
