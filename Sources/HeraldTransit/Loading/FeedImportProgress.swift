/// Where a feed import is, for a CLI or a log that shows long work moving.
///
/// Why steps and not a percentage: reading and checking a large feed takes seconds of CPU with
/// no row count known up front; writing rows is the part that can take minutes on a slow
/// database, and there the count is known.
public enum FeedImportProgress: Sendable, Equatable {
    /// The archive is in memory (`bytes` of zip).
    case read(bytes: Int)
    /// Parsed and checked: `rows` to write, `warnings` found.
    case checked(rows: Int, warnings: Int)
    /// Rows written so far of the feed's total.
    case writing(written: Int, of: Int)
    /// The new version serves.
    case activated(version: String)
}
