import HeraldCore

/// The description of one route for the OpenAPI document.
///
/// Why written next to each module's routes and not derived from them: the document is a
/// contract for app developers; a test compares it with the routes the router really has,
/// so a route added without documentation fails the build's tests.
public struct APIOperation: Sendable {
    public enum Access: Sendable {
        case public_
        case authenticated(roles: [String])
    }

    public var method: String
    public var path: String
    public var summary: String
    public var description: String?
    public var tag: String
    public var access: Access
    public var requestBody: JSONValue?
    /// The schema of `data` in the success envelope (or the whole body for non-envelope routes).
    public var response: JSONValue?
    public var successStatus: Int
    public var enveloped: Bool
    public var acceptsIdempotencyKey: Bool
    /// Error statuses this route may answer besides the common ones, with what they mean.
    public var errors: [Int: String]
    public var parameters: [JSONValue]

    public init(
        _ method: String, _ path: String, summary: String, description: String? = nil, tag: String,
        access: Access, requestBody: JSONValue? = nil, response: JSONValue? = nil, successStatus: Int = 200,
        enveloped: Bool = true, acceptsIdempotencyKey: Bool = false, errors: [Int: String] = [:], parameters: [JSONValue] = []
    ) {
        self.method = method
        self.path = path
        self.summary = summary
        self.description = description
        self.tag = tag
        self.access = access
        self.requestBody = requestBody
        self.response = response
        self.successStatus = successStatus
        self.enveloped = enveloped
        self.acceptsIdempotencyKey = acceptsIdempotencyKey
        self.errors = errors
        self.parameters = parameters
    }
}

/// Small helpers for writing JSON Schema fragments.
public enum Schema {
    public static func object(_ properties: [String: JSONValue], required: [String] = []) -> JSONValue {
        var schema: [String: JSONValue] = ["type": "object", "properties": .object(properties)]
        if !required.isEmpty { schema["required"] = .array(required.map(JSONValue.string)) }
        return .object(schema)
    }

    public static func string(_ description: String? = nil, format: String? = nil, nullable: Bool = false, maxLength: Int? = nil) -> JSONValue {
        var schema: [String: JSONValue] = ["type": nullable ? ["string", "null"] : "string"]
        if let description { schema["description"] = .string(description) }
        if let format { schema["format"] = .string(format) }
        if let maxLength { schema["maxLength"] = .number(Double(maxLength)) }
        return .object(schema)
    }

    public static func integer(_ description: String? = nil) -> JSONValue {
        var schema: [String: JSONValue] = ["type": "integer"]
        if let description { schema["description"] = .string(description) }
        return .object(schema)
    }

    public static func enumeration(_ values: [String], description: String? = nil) -> JSONValue {
        var schema: [String: JSONValue] = ["type": "string", "enum": .array(values.map(JSONValue.string))]
        if let description { schema["description"] = .string(description) }
        return .object(schema)
    }
}
