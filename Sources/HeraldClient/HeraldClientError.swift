/// What went wrong, as the app decides about it: the server's stable error code (`FORBIDDEN`,
/// `VALIDATION_FAILED`, `RATE_LIMITED`…) with its message and field problems, or a transport
/// failure, or an answer that is not Herald's.
public enum HeraldClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The server's error envelope: `status`, `code`, `message`, field problems, and how long
    /// to wait (`Retry-After`) when it said.
    case api(status: Int, code: String, message: String, fields: [FieldProblem], retryAfterSeconds: Int?)
    /// The request did not reach the server or its answer did not arrive.
    case transport(String)
    /// An answer that is not Herald's envelope (a proxy's page, a truncated body).
    case unexpectedResponse(status: Int, body: String)

    public struct FieldProblem: Sendable, Equatable, Decodable {
        public let field: String
        public let message: String

        public init(field: String, message: String) {
            self.field = field
            self.message = message
        }
    }

    /// The stable code for `.api` errors.
    public var code: String? {
        if case .api(_, let code, _, _, _) = self { return code }
        return nil
    }

    public var description: String {
        switch self {
        case .api(let status, let code, let message, let fields, _):
            "\(status) \(code): \(message)" + (fields.isEmpty ? "" : " (" + fields.map { "\($0.field): \($0.message)" }.joined(separator: "; ") + ")")
        case .transport(let reason): "transport: \(reason)"
        case .unexpectedResponse(let status, let body): "unexpected \(status) answer: \(body.prefix(200))"
        }
    }
}
