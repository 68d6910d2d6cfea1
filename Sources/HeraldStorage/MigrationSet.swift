/// One module's migrations, applied in version order under the module's name.
///
/// Why per module: each module owns its tables, so it owns the steps that create and change
/// them; a module's list grows without knowing the others' numbers. The server lists the
/// modules in the order their steps run (`HeraldSchema`).
public struct MigrationSet: Sendable {
    /// Recorded with each step (`herald_migrations.module`); never renamed once shipped.
    public let module: String
    public let migrations: [Migration]

    public init(module: String, migrations: [Migration]) {
        precondition(Set(migrations.map(\.version)).count == migrations.count, "\(module): migration versions must be unique")
        self.module = module
        self.migrations = migrations.sorted { $0.version < $1.version }
    }
}

/// A step as recorded: its module and its version there.
public struct MigrationID: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let module: String
    public let version: Int

    public init(module: String, version: Int) {
        self.module = module
        self.version = version
    }

    public var description: String { "\(module)/\(version)" }

    public static func < (a: MigrationID, b: MigrationID) -> Bool { (a.module, a.version) < (b.module, b.version) }
}
