import HeraldDispatch
import Testing

/// Push bodies show money and volume the way people write them, from integer amounts.
@Suite struct DisplayFormatTests {
    @Test func moneyUsesTheCurrencysMinorUnitAndSymbol() {
        #expect(DisplayFormat.money(32_150, currency: "USD") == "$321.50")
        #expect(DisplayFormat.money(5, currency: "USD") == "$0.05")
        #expect(DisplayFormat.money(-500, currency: "EUR") == "-€5.00")
        #expect(DisplayFormat.money(1_500, currency: "JPY") == "¥1500")
        #expect(DisplayFormat.money(1_200, currency: "CHF") == "CHF 12.00")
    }

    @Test func volumeIsTheShortestDecimal() {
        #expect(DisplayFormat.yards(650) == "6.5")
        #expect(DisplayFormat.yards(400) == "4")
        #expect(DisplayFormat.yards(425) == "4.25")
        #expect(DisplayFormat.yards(405) == "4.05")
        #expect(DisplayFormat.yards(1) == "0.01")
    }
}
