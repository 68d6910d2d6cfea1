/// Money and volume as people read them in a push ("Volume increased to 4.5 cu yd. New price:
/// $187.50"), from the integer amounts Herald computes with.
///
/// Why not a locale formatter: the text is built on the server for a push body, in the
/// notification's one language, and must not change with the server's locale.
public enum DisplayFormat {
    /// Currencies whose minor unit is the unit itself (ISO 4217 exponent 0).
    static let zeroDecimal: Set<String> = ["BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG", "RWF", "UGX", "VND", "VUV", "XAF", "XOF", "XPF"]
    static let symbols: [String: String] = ["USD": "$", "CAD": "CA$", "AUD": "A$", "EUR": "€", "GBP": "£", "JPY": "¥"]

    /// `18750, USD` → `$187.50`; `-500, EUR` → `-€5.00`; unknown codes as `CHF 12.00`.
    public static func money(_ minor: Int64, currency: String) -> String {
        let sign = minor < 0 ? "-" : ""
        let magnitude = minor.magnitude
        let number: String
        if zeroDecimal.contains(currency) {
            number = "\(magnitude)"
        } else {
            let cents = magnitude % 100
            number = "\(magnitude / 100).\(cents < 10 ? "0" : "")\(cents)"
        }
        if let symbol = symbols[currency] { return sign + symbol + number }
        return sign + currency + " " + number
    }

    /// Hundredths of a cubic yard as the shortest decimal: 450 → `4.5`, 400 → `4`, 425 → `4.25`.
    public static func yards(_ hundredths: Int64) -> String {
        let whole = hundredths / 100
        let fraction = hundredths % 100
        if fraction == 0 { return "\(whole)" }
        if fraction % 10 == 0 { return "\(whole).\(fraction / 10)" }
        return "\(whole).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    /// Hundredths as a JSON-friendly number (450 → 4.5).
    static func yardsValue(_ hundredths: Int64) -> Double { Double(hundredths) / 100 }
}
