/// A statement that must return a row (an `INSERT … RETURNING`) returned none: the database
/// broke its own contract, which no caller can repair.
public enum StoreError: Error, Sendable {
    case noRowReturned
}
