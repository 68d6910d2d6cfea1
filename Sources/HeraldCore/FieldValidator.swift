/// Collects every invalid field of a request before answering, so a client fixes all of
/// them in one round trip.
public struct FieldValidator: Sendable {
    public private(set) var errors: [FieldError] = []

    public init() {}

    public mutating func check(_ condition: Bool, _ field: String, _ message: @autoclosure () -> String) {
        if !condition { errors.append(FieldError(field: field, message: message())) }
    }

    public mutating func fail(_ field: String, _ message: String) {
        errors.append(FieldError(field: field, message: message))
    }

    /// Throws 422 `VALIDATION_FAILED` naming every collected field, if any.
    public func validate() throws {
        if !errors.isEmpty { throw APIError.validation(errors) }
    }
}
