/// One versioned step of the schema.
///
/// Why SQL text with two small substitutions rather than a schema DSL: the DDL stays
/// readable and reviewable as SQL. The few spelling differences between the engines are
/// tokens: `{AUTO_ID}` (an auto-incrementing 64-bit primary key) and `{BYTES}` (binary).
public struct Migration: Sendable {
    /// Its place in its module's list (1, 2, …).
    public let version: Int
    public let name: String
    public let statements: [String]
    /// The version this step had in the one list all modules shared until each module took
    /// its own tables (nil: written since). A database migrated before then has the step
    /// when it recorded that version; a step split in two keeps the version in both.
    public let legacyVersion: Int?

    public init(version: Int, name: String, legacyVersion: Int? = nil, statements: [String]) {
        self.version = version
        self.name = name
        self.legacyVersion = legacyVersion
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
