import SQLKit

extension SQLQueryString {
    /// Appends `(?, ?, …)` binding `values` (callers keep lists to a few hundred items).
    public mutating func appendInList(_ values: [String]) {
        appendInterpolation(unsafeRaw: "(")
        for (index, value) in values.enumerated() {
            if index > 0 { appendInterpolation(unsafeRaw: ", ") }
            appendInterpolation(bind: value)
        }
        appendInterpolation(unsafeRaw: ")")
    }
}

extension Array {
    /// The array in consecutive pieces of at most `size` elements.
    public func chunked(_ size: Int) -> [ArraySlice<Element>] {
        stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
