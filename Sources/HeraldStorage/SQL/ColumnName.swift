import SQLKit

/// How a record's properties name their columns: `customerID` is `customer_id`, `baseURL` is
/// `base_url`, `webpushP256dh` is `webpush_p256dh`, a name already in snake case is itself.
///
/// Why one rule: records decode from rows by it (`first(row:)`, `all(rows:)`), so a record
/// does not restate each column's name in a `CodingKeys` enum, and a new column needs only
/// its property. SQLKit's own snake-case strategy splits `ID` and `P256dh` differently from
/// Herald's column names, hence this one. A record whose property is named otherwise than
/// its column keeps a `CodingKeys` with the column's (snake-case) name, which this rule
/// leaves unchanged.
public enum ColumnName {
    /// The column of a property: a new word at an uppercase letter after a lowercase letter or
    /// a digit, or at the last capital of a run followed by a lowercase letter (`URLPath`:
    /// `url_path`); digits stay with the word before them.
    public static func of(_ property: String) -> String {
        let characters = Array(property)
        var column = ""
        column.reserveCapacity(characters.count + 4)
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) {
                    column.append("_")
                }
            }
            column += character.lowercased()
        }
        return column
    }

    /// The row decoder every store uses.
    public static let decoder = SQLRowDecoder(keyDecodingStrategy: .custom { path in ColumnKey(ColumnName.of(path.last?.stringValue ?? "")) })

    private struct ColumnKey: CodingKey {
        let stringValue: String
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }
}

extension SQLQueryFetcher {
    /// The first row as a record named by `ColumnName`'s rule.
    public func first<D: Decodable>(row type: D.Type) async throws -> D? {
        try await first(decoding: D.self, with: ColumnName.decoder)
    }

    /// Every row as records named by `ColumnName`'s rule.
    public func all<D: Decodable>(rows type: D.Type) async throws -> [D] {
        try await all(decoding: D.self, with: ColumnName.decoder)
    }
}
