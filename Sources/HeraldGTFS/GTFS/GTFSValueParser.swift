import Foundation

/// Parses GTFS field values straight from their bytes (no `String` in between): the reader
/// meets these hundreds of thousands of times per feed.
public enum GTFSValueParser {
    /// A whole number with an optional sign; nil for anything else (empty, `1.0`, `1e3`).
    public static func integer(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        var i = 0
        var negative = false
        guard !bytes.isEmpty else { return nil }
        if bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") {
            negative = bytes[0] == UInt8(ascii: "-")
            i = 1
        }
        guard i < bytes.count, bytes.count - i <= 18 else { return nil }
        var value = 0
        while i < bytes.count {
            let digit = Int(bytes[i]) &- 48
            guard digit >= 0 && digit <= 9 else { return nil }
            value = value * 10 + digit
            i += 1
        }
        return negative ? -value : value
    }

    /// A decimal number (`-33.8688`, `.5`, `1e3`); nil for anything else, infinities and NaN.
    ///
    /// Up to 15 significant digits with at most 22 decimals it is one exact division, so the
    /// result is correctly rounded (coordinates and prices always are); longer values go to
    /// `strtod`.
    public static func double(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        guard !bytes.isEmpty else { return nil }
        var i = 0
        var negative = false
        if bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") {
            negative = bytes[0] == UInt8(ascii: "-")
            i = 1
        }
        var mantissa: Int64 = 0
        var digits = 0
        var decimals = 0
        var sawDigit = false
        var sawPoint = false
        while i < bytes.count {
            let byte = bytes[i]
            if byte == UInt8(ascii: ".") {
                if sawPoint { return nil }
                sawPoint = true
            } else if byte >= 48 && byte <= 57 {
                sawDigit = true
                if digits < 15 {
                    if mantissa != 0 || byte != 48 { digits += 1 }
                    mantissa = mantissa * 10 + Int64(byte - 48)
                    if sawPoint { decimals += 1 }
                } else {
                    return slowDouble(bytes)
                }
            } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                return sawDigit ? slowDouble(bytes) : nil
            } else {
                return nil
            }
            i += 1
        }
        guard sawDigit, decimals <= 22 else { return sawDigit ? slowDouble(bytes) : nil }
        let value = decimals == 0 ? Double(mantissa) : Double(mantissa) / powersOfTen[decimals]
        return negative ? -value : value
    }

    static let powersOfTen: [Double] = (0...22).map { pow(10, Double($0)) }

    static func slowDouble(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        guard bytes.count < 64 else { return nil }
        // Only number characters reach strtod; it must consume all of them.
        for byte in bytes {
            switch byte {
            case 48...57, UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "e"), UInt8(ascii: "E"): continue
            default: return nil
            }
        }
        var text = Array(bytes)
        text.append(0)
        let expected = bytes.count
        return text.withUnsafeBufferPointer { pointer -> Double? in
            pointer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: pointer.count) { (start: UnsafePointer<CChar>) -> Double? in
                var end: UnsafeMutablePointer<CChar>? = nil
                let value = strtod(start, &end)
                guard let end, UnsafePointer(end) - start == expected, value.isFinite else { return nil }
                return value
            }
        }
    }

    /// `H:MM:SS` or `HH:MM:SS` (hours may be 24 or more for trips past midnight) in seconds
    /// since the service day's start; nil for anything else (minutes or seconds ≥ 60).
    public static func time(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32? {
        let count = bytes.count
        guard count >= 7, count <= 9 else { return nil }
        guard bytes[count - 3] == UInt8(ascii: ":"), bytes[count - 6] == UInt8(ascii: ":") else { return nil }
        func digit(_ index: Int) -> Int32? {
            let value = Int32(bytes[index]) - 48
            return value >= 0 && value <= 9 ? value : nil
        }
        var hours: Int32 = 0
        for index in 0..<(count - 6) {
            guard let d = digit(index) else { return nil }
            hours = hours * 10 + d
        }
        guard let m1 = digit(count - 5), let m2 = digit(count - 4), let s1 = digit(count - 2), let s2 = digit(count - 1) else { return nil }
        let minutes = m1 * 10 + m2
        let seconds = s1 * 10 + s2
        guard minutes < 60, seconds < 60 else { return nil }
        return hours * 3600 + minutes * 60 + seconds
    }

    /// `YYYYMMDD` as days since 1970-01-01; nil unless it is a real calendar date.
    public static func date(_ bytes: UnsafeBufferPointer<UInt8>) -> Int32? {
        guard bytes.count == 8 else { return nil }
        var value: Int32 = 0
        for byte in bytes {
            guard byte >= 48 && byte <= 57 else { return nil }
            value = value * 10 + Int32(byte) - 48
        }
        let year = value / 10_000
        let month = value / 100 % 100
        let day = value % 100
        return ServiceDate.days(year: Int(year), month: Int(month), day: Int(day))
    }
}
