/// One versioned step of the schema.
///
/// Why SQL text with two small substitutions rather than a schema DSL: the DDL stays
/// readable and reviewable as SQL. The few spelling differences between the engines are
/// tokens: `{AUTO_ID}` (an auto-incrementing 64-bit primary key) and `{BYTES}` (binary).
public struct Migration: Sendable {
    public let version: Int
    public let name: String
    public let statements: [String]

    public init(version: Int, name: String, statements: [String]) {
        self.version = version
        self.name = name
        self.statements = statements
    }

    func sql(for engine: DatabaseEngine) -> [String] {
        statements.map { statement in
            switch engine {
            case .sqlite:
                statement
                    .replacingOccurrences(of: "{AUTO_ID}", with: "INTEGER PRIMARY KEY AUTOINCREMENT")
                    .replacingOccurrences(of: "{BYTES}", with: "BLOB")
            case .postgres:
                statement
                    .replacingOccurrences(of: "{AUTO_ID}", with: "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY")
                    .replacingOccurrences(of: "{BYTES}", with: "BYTEA")
            }
        }
    }
}
