/// An error meant for the client: an HTTP status, a stable code, a safe message and
/// optional structured details.
///
/// Why: every route in every module answers errors in one envelope. Anything thrown that is
/// not an `APIError` is treated as internal: logged with the request id and answered as a
/// generic 500, so internal detail never reaches a client.
public struct APIError: Error, Sendable, Equatable {
    public var status: Int
    public var code: ErrorCode
    public var message: String
    public var details: JSONValue?
    /// Extra response headers (`Retry-After`, `WWW-Authenticate`, …).
    public var headers: [String: String]

    public init(status: Int, code: ErrorCode, message: String, details: JSONValue? = nil, headers: [String: String] = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers
    }

    public static func unauthorized(_ message: String = "Authentication is required.") -> APIError {
        APIError(status: 401, code: .unauthorized, message: message, headers: ["WWW-Authenticate": "Bearer"])
    }

    public static func forbidden(_ message: String = "You are not allowed to do this.") -> APIError {
        APIError(status: 403, code: .forbidden, message: message)
    }

    public static func notFound(_ message: String = "The resource does not exist.") -> APIError {
        APIError(status: 404, code: .notFound, message: message)
    }

    public static func conflict(_ message: String, code: ErrorCode = .conflict, details: JSONValue? = nil) -> APIError {
        APIError(status: 409, code: code, message: message, details: details)
    }

    public static func invalidJSON(_ message: String = "The request body is not valid JSON.") -> APIError {
        APIError(status: 400, code: .invalidJSON, message: message)
    }

    public static func payloadTooLarge(limit: Int) -> APIError {
        APIError(
            status: 413, code: .payloadTooLarge,
            message: "The request body is larger than \(limit) bytes.",
            details: ["limit_bytes": .number(Double(limit))]
        )
    }

    /// One or more fields failed validation; `fields` names each with its problem.
    public static func validation(_ fields: [FieldError]) -> APIError {
        let first = fields.first.map { "\($0.field): \($0.message)" } ?? "invalid request"
        return APIError(
            status: 422, code: .validationFailed,
            message: fields.count == 1 ? "Validation failed: \(first)" : "Validation failed: \(first) (and \(fields.count - 1) more)",
            details: ["fields": .array(fields.map { ["field": .string($0.field), "message": .string($0.message)] })]
        )
    }

    public static func validation(field: String, _ message: String) -> APIError {
        validation([FieldError(field: field, message: message)])
    }

    /// Renames the fields a validation error names: a route that takes another document's
    /// field names (the transit app's `/user/device`, `/user/settings`) reports them as its client
    /// sent them.
    public mutating func renameFields(_ names: [String: String]) {
        guard case .object(var body)? = details, case .array(let fields)? = body["fields"] else { return }
        body["fields"] = .array(
            fields.map { field in
                guard case .object(var object) = field, case .string(let name)? = object["field"], let renamed = names[name] else { return field }
                object["field"] = .string(renamed)
                return .object(object)
            })
        details = .object(body)
        for (from, to) in names where message.hasPrefix("Validation failed: \(from):") {
            message = "Validation failed: \(to):" + message.dropFirst("Validation failed: \(from):".count)
        }
    }

    public static let internalServerError = APIError(
        status: 500, code: .internalServerError,
        message: "An unexpected error occurred. Please try again later."
    )
}

/// One invalid field of a request, named by its JSON path (`pickup.latitude`, `items[2].quantity`).
public struct FieldError: Sendable, Equatable {
    public var field: String
    public var message: String
    public init(field: String, message: String) {
        self.field = field
        self.message = message
    }
}
