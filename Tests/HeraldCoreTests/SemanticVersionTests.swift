import HeraldCore
import Testing

@Suite struct SemanticVersionTests {
    @Test(arguments: [
        ("1.9.0", "1.10.0"), ("1.2", "1.2.1"), ("0.9.9", "1"), ("2.0.0", "10.0.0"), ("1.2.0-beta.1", "1.2.1"),
    ])
    func ordersNumericallyPartByPart(older: String, newer: String) throws {
        let a = try #require(SemanticVersion(older))
        let b = try #require(SemanticVersion(newer))
        #expect(a < b)
        #expect(!(b < a))
    }

    @Test func missingPartsCountAsZero() throws {
        #expect(try #require(SemanticVersion("1.2")) == #require(SemanticVersion("1.2.0")))
        #expect(try #require(SemanticVersion("1.2.0+42")) == #require(SemanticVersion("1.2")))
    }

    @Test(arguments: ["", "abc", "1..2", "1.2.x", "-1.0", "1.2.3.4.5", "1.0000000000", " 1.2"])
    func rejectsWhatIsNotAVersion(text: String) {
        #expect(SemanticVersion(text) == nil)
    }
}
