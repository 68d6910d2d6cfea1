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
    /// The route refuses a request without `Idempotency-Key` (400 `IDEMPOTENCY_KEY_REQUIRED`).
    public var requiresIdempotencyKey = false
    /// Error statuses this route may answer besides the common ones, with what they mean.
    public var errors: [Int: String]
    public var parameters: [JSONValue]
    /// A second success status with the same body: 201 for an upsert that created, 200 for a
    /// send that only found duplicates.
    public var otherSuccessStatus: Int?
    /// The success answer's media type (HTML docs, Prometheus text, Engine.IO payloads, zips).
    public var contentType: String
    /// The schema of this operation's own error bodies (Engine.IO answers `{code, message}`).
    public var errorSchemaRef: String

    public init(
        _ method: String, _ path: String, summary: String, description: String? = nil, tag: String,
        access: Access, requestBody: JSONValue? = nil, response: JSONValue? = nil, successStatus: Int = 200,
        enveloped: Bool = true, acceptsIdempotencyKey: Bool = false, errors: [Int: String] = [:], parameters: [JSONValue] = [],
        contentType: String = "application/json", errorSchemaRef: String = "#/components/schemas/Error", otherSuccessStatus: Int? = nil
    ) {
        self.otherSuccessStatus = otherSuccessStatus
        self.contentType = contentType
        self.errorSchemaRef = errorSchemaRef
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

    public static func string(
        _ description: String? = nil, format: String? = nil, nullable: Bool = false, minLength: Int? = nil, maxLength: Int? = nil,
        pattern: String? = nil
    ) -> JSONValue {
        var schema: [String: JSONValue] = ["type": nullable ? ["string", "null"] : "string"]
        if let description { schema["description"] = .string(description) }
        if let format { schema["format"] = .string(format) }
        // RFC 3339 allows UTC offsets up to ±23:59; Herald (like Foundation and most
        // platforms) reads up to ±18:00, the range of real zones. Said here so that schema-valid
        // times are accepted ones.
        if format == "date-time" && pattern == nil { schema["pattern"] = .string(dateTimeOffset) }
        if let minLength { schema["minLength"] = .number(Double(minLength)) }
        if let maxLength { schema["maxLength"] = .number(Double(maxLength)) }
        if let pattern {
            schema["pattern"] = .string(pattern)
            // Every patterned field is text a validator checks whole; see `controlCharacter`.
            schema["not"] = ["pattern": .string(controlCharacter)]
        }
        return .object(schema)
    }

    /// Free text a validator trims (names, addresses, reasons): up to `maxLength`, with at least
    /// one character that is not white space, since a blank value is refused rather than stored.
    public static func text(_ description: String? = nil, maxLength: Int) -> JSONValue {
        string(description, maxLength: maxLength, pattern: "\\S")
    }

    /// The end of a `date-time` Herald reads: `Z` or an offset within ±18:00.
    static let dateTimeOffset = "([Zz]|[+-](0[0-9]|1[0-7]):[0-5][0-9]|[+-]18:00)$"

    /// Printable ASCII without spaces, 1 to `maxBytes`: the part of a byte-limited text field
    /// (ids, keys) that every validator accepts whatever the characters' encoded size.
    public static func token(_ description: String? = nil, maxBytes: Int) -> JSONValue {
        string(description, pattern: "^[!-~]{1,\(maxBytes)}$")
    }

    /// Printable ASCII (spaces allowed), 1 to `maxBytes`.
    public static func asciiText(_ description: String? = nil, maxBytes: Int) -> JSONValue {
        string(description, pattern: "^[ -~]{1,\(maxBytes)}$")
    }

    /// One control character (C0, DEL, C1), which text fields refuse. Stated as `not` a
    /// search rather than an anchored pattern: `$` matches before a final newline in some
    /// regex engines (Python's, which schemathesis uses), so `^…$` alone lets "x\n" through.
    public static let controlCharacter = "[\\u0000-\\u001F\\u007F-\\u009F]"

    public static func integer(_ description: String? = nil, minimum: Int? = nil, maximum: Int? = nil) -> JSONValue {
        var schema: [String: JSONValue] = ["type": "integer"]
        if let description { schema["description"] = .string(description) }
        if let minimum { schema["minimum"] = .number(Double(minimum)) }
        if let maximum { schema["maximum"] = .number(Double(maximum)) }
        return .object(schema)
    }

    /// An array of `items`, `minItems` to `maxItems` long.
    public static func array(_ items: JSONValue, minItems: Int? = nil, maxItems: Int? = nil) -> JSONValue {
        var schema: [String: JSONValue] = ["type": "array", "items": items]
        if let minItems { schema["minItems"] = .number(Double(minItems)) }
        if let maxItems { schema["maxItems"] = .number(Double(maxItems)) }
        return .object(schema)
    }

    /// `schema` with exactly one of `fields` present (`oneOf` of `required`).
    public static func exactlyOne(of fields: [String], in schema: JSONValue) -> JSONValue {
        guard case .object(var object) = schema else { return schema }
        object["oneOf"] = .array(fields.map { ["required": [.string($0)]] })
        return .object(object)
    }

    /// `schema` refusing properties it does not list (for bodies whose validator names
    /// every unknown field).
    public static func closed(_ schema: JSONValue) -> JSONValue {
        guard case .object(var object) = schema else { return schema }
        object["additionalProperties"] = false
        return .object(object)
    }

    /// `schema` with at least one property (a PATCH that must change something).
    public static func notEmpty(_ schema: JSONValue) -> JSONValue {
        guard case .object(var object) = schema else { return schema }
        object["minProperties"] = 1
        return .object(object)
    }

    public static func enumeration(_ values: [String], description: String? = nil) -> JSONValue {
        var schema: [String: JSONValue] = ["type": "string", "enum": .array(values.map(JSONValue.string))]
        if let description { schema["description"] = .string(description) }
        return .object(schema)
    }
}
