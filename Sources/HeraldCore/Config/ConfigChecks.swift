/// Collects one configuration section's problems, each named by its path in the file.
///
/// Why: every module validates its own section at start-up (a typo in a limit should stop
/// `herald serve` with a clear message, not surface as odd behaviour under load), and the
/// operator reads the problems by path (`dispatch.radius_km`), so each section names its
/// fields under its own prefix.
public struct ConfigChecks {
    public private(set) var errors: [FieldError] = []
    private let prefix: String

    /// `section` is the section's path (`push`, `trips.surge`); empty for the root.
    public init(_ section: String) {
        prefix = section.isEmpty ? "" : section + "."
    }

    /// Records `message` for `field` (relative to the section) unless `ok`.
    public mutating func check(_ ok: Bool, _ field: String, _ message: String) {
        if !ok { errors.append(FieldError(field: prefix + field, message: message)) }
    }

    /// Adds a nested section's problems (already named by their full path).
    public mutating func add(_ more: [FieldError]) {
        errors += more
    }
}
