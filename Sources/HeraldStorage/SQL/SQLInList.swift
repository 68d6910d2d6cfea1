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

extension SQLDatabase {
    /// The rows of `table` whose `column` is one of `values`, read in IN-lists of 500.
    public func rows<Row: Decodable>(_ type: Row.Type, from table: String, where column: String, in values: [String]) async throws -> [Row] {
        var rows: [Row] = []
        for chunk in values.chunked(500) {
            var query = SQLQueryString("SELECT * FROM ")
            query.appendInterpolation(unsafeRaw: "\(table) WHERE \(column) IN ")
            query.appendInList(Array(chunk))
            rows += try await raw(query).all(decoding: Row.self)
        }
        return rows
    }
}
