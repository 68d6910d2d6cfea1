import HeraldCore

/// Builds the OpenAPI 3.1 document served at `/api/v1/openapi.json`.
public enum OpenAPIDocument {
    static let commonErrors: [Int: String] = [
        400: "Malformed JSON (`INVALID_JSON`)",
        413: "Body too large (`PAYLOAD_TOO_LARGE`)",
        415: "Body is not JSON (`UNSUPPORTED_MEDIA_TYPE`)",
        426: "App too old (`APP_UPDATE_REQUIRED`)",
        429: "Rate limited (`RATE_LIMIT_EXCEEDED`, with `Retry-After`)",
        500: "Internal error (`INTERNAL_SERVER_ERROR`)",
        503: "The database is briefly unreachable (`SERVICE_UNAVAILABLE`, with `Retry-After`)",
    ]

    public static func build(_ operations: [APIOperation], version: String) -> JSONValue {
        var paths: [String: [String: JSONValue]] = [:]
        for operation in operations {
            paths[operation.path, default: [:]][operation.method.lowercased()] = item(operation)
        }
        return [
            "openapi": "3.1.0",
            "info": [
                "title": "Herald API",
                "version": .string(version),
                "description":
                    "Realtime dispatch and notifications. Successful answers are {\"data\", \"meta\"}; errors are {\"error\": {\"code\", \"message\", \"details\"}, \"meta\"} with stable codes.",
            ],
            "servers": [["url": "/"]],
            "paths": .object(paths.mapValues { .object($0) }),
            "components": [
                "securitySchemes": [
                    "bearerAuth": ["type": "http", "scheme": "bearer", "bearerFormat": "JWT"]
                ],
                "schemas": [
                    "Meta": Schema.object(
                        ["timestamp": Schema.string(format: "date-time"), "request_id": Schema.string()],
                        required: ["timestamp", "request_id"]),
                    "Error": Schema.object(
                        [
                            "error": Schema.object(
                                [
                                    "code": Schema.string("Stable upper-case code"),
                                    "message": Schema.string("Safe, human-readable message"),
                                    "details": ["type": ["object", "null"]],
                                ], required: ["code", "message"]),
                            "meta": ["$ref": "#/components/schemas/Meta"],
                        ], required: ["error", "meta"]),
                    "EngineError": Schema.object(
                        ["code": ["type": "integer"], "message": Schema.string()], required: ["code", "message"]),
                ],
            ],
        ]
    }

    static func item(_ operation: APIOperation) -> JSONValue {
        var item: [String: JSONValue] = [
            "summary": .string(operation.summary),
            "tags": [.string(operation.tag)],
            "operationId": .string(operationID(operation)),
        ]
        if let description = operation.description { item["description"] = .string(description) }
        var parameters = operation.parameters
        // A path parameter the operation declares itself (an enumeration) keeps its schema.
        for name in pathParameters(operation.path) where !parameters.contains(where: { $0["name"]?.stringValue == name && $0["in"] == "path" }) {
            parameters.append(["name": .string(name), "in": "path", "required": true, "schema": ["type": "string"]])
        }
        if operation.acceptsIdempotencyKey {
            parameters.append([
                "name": "Idempotency-Key", "in": "header", "required": .bool(operation.requiresIdempotencyKey),
                "description": "Makes a retry safe: the first response is replayed for 24 hours.",
                "schema": ["type": "string", "pattern": "^[ -~]{1,255}$"],
            ])
        }
        if !parameters.isEmpty { item["parameters"] = .array(parameters) }
        if let body = operation.requestBody {
            item["requestBody"] = ["required": true, "content": ["application/json": ["schema": Self.requestSchema(body)]]]
        }
        var responses: [String: JSONValue] = [:]
        let success: JSONValue
        if operation.enveloped {
            success = Schema.object(
                ["data": operation.response ?? ["type": "object"], "meta": ["$ref": "#/components/schemas/Meta"]],
                required: ["data", "meta"])
        } else {
            success = operation.response ?? ["type": "object"]
        }
        let successResponse: JSONValue = ["description": "Success", "content": [.init(operation.contentType): ["schema": success]]]
        responses[String(operation.successStatus)] = operation.successStatus == 204 ? ["description": "Success, no content"] : successResponse
        if let other = operation.otherSuccessStatus { responses[String(other)] = successResponse }
        var errors = operation.errors
        if case .authenticated = operation.access {
            errors[401] = errors[401] ?? "Missing or invalid token (`UNAUTHORIZED`)"
            errors[403] = errors[403] ?? "Role not allowed (`FORBIDDEN`)"
        }
        // Every route is rate limited, whatever its answers look like otherwise.
        errors[429] = errors[429] ?? commonErrors[429]
        if operation.enveloped {
            errors.merge(commonErrors) { own, _ in own }
            if operation.requestBody != nil || Self.hasQueryParameters(operation) {
                errors[422] = errors[422] ?? "Invalid fields or query parameters (`VALIDATION_FAILED`)"
            }
        }
        for (status, meaning) in errors {
            if status == 304 {
                responses[String(status)] = ["description": .string(meaning)]
                continue
            }
            // The operation's own errors have its own shape; Herald's layers around it (rate
            // limits, bodies, auth) always answer with the envelope.
            let ref = operation.errors[status] != nil ? operation.errorSchemaRef : "#/components/schemas/Error"
            responses[String(status)] = ["description": .string(meaning), "content": ["application/json": ["schema": ["$ref": .string(ref)]]]]
        }
        item["responses"] = .object(responses)
        if case .authenticated(let roles) = operation.access {
            item["security"] = [["bearerAuth": []]]
            if !roles.isEmpty { item["x-herald-roles"] = .array(roles.map(JSONValue.string)) }
        }
        return .object(item)
    }

    static func hasQueryParameters(_ operation: APIOperation) -> Bool {
        operation.parameters.contains { $0["in"] == "query" }
    }

    static func pathParameters(_ path: String) -> [String] {
        path.split(separator: "/").compactMap { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? String(part.dropFirst().dropLast()) : nil
        }
    }

    static func operationID(_ operation: APIOperation) -> String {
        let words = operation.path.split(separator: "/").filter { $0 != "api" && $0 != "v1" }
            .map { $0.replacingOccurrences(of: "{", with: "by_").replacingOccurrences(of: "}", with: "").replacingOccurrences(of: "-", with: "_") }
        return ([operation.method.lowercased()] + words).joined(separator: "_")
    }

    /// A request body's schema as the validators apply it: every object that lists its
    /// properties refuses others (each route's `FieldReader` names unknown fields), and a
    /// bounded text field is never empty (every text validator says "1 to N characters").
    /// Objects that say what they allow for extra keys, and strings with their own minimum,
    /// keep their own rule.
    static func requestSchema(_ schema: JSONValue) -> JSONValue {
        switch schema {
        case .object(var object):
            if case .object(let properties)? = object["properties"] {
                object["properties"] = .object(properties.mapValues(requestSchema))
                if object["additionalProperties"] == nil { object["additionalProperties"] = false }
            }
            if let items = object["items"] { object["items"] = requestSchema(items) }
            for key in ["oneOf", "anyOf", "allOf"] {
                if case .array(let variants)? = object[key] { object[key] = .array(variants.map(requestSchema)) }
            }
            if Self.isString(object["type"]), object["maxLength"] != nil, object["minLength"] == nil, object["enum"] == nil,
                object["pattern"] == nil, object["format"] == nil
            {
                object["minLength"] = 1
                object["not"] = ["pattern": .string(Schema.controlCharacter)]
            }
            return .object(object)
        default:
            return schema
        }
    }

    private static func isString(_ type: JSONValue?) -> Bool {
        switch type {
        case .string("string")?: true
        case .array(let types)?: types.contains(.string("string"))
        default: false
        }
    }
}
