import HeraldCore

/// `docs/api-reference.md`, written from the same operations as the OpenAPI document, so the
/// reference a reader browses on a forge cannot say something the server does not
/// (`APIReferenceTests` fails when the committed page differs from this rendering).
public enum APIReference {
    public static func markdown(_ operations: [APIOperation]) -> String {
        var out = """
            # API reference

            Generated from the operations behind `/api/v1/openapi.json` (the server also serves it
            as a page at `/api/v1/docs`); do not edit by hand. Regenerate with
            `HERALD_WRITE_API_REFERENCE=1 swift test --filter APIReferenceTests`. Conventions
            (envelope, error codes, idempotency, rate limits): [api-conventions.md](api-conventions.md).

            Every answer may also be one of the common errors: 400 `INVALID_JSON`, 413
            `PAYLOAD_TOO_LARGE`, 415 `UNSUPPORTED_MEDIA_TYPE`, 426 `APP_UPDATE_REQUIRED`, 429
            `RATE_LIMIT_EXCEEDED`, 500 `INTERNAL_SERVER_ERROR`, 503 `SERVICE_UNAVAILABLE`; a route
            that needs a token answers 401 without one and 403 to a role it does not serve.

            """
        let grouped = Dictionary(grouping: operations, by: \.tag).sorted { $0.key < $1.key }
        out += "\n| tag | operations |\n|---|---|\n"
        for (tag, items) in grouped { out += "| [\(tag)](#\(anchor(tag))) | \(items.count) |\n" }
        for (tag, items) in grouped {
            out += "\n## \(tag)\n\n| method | path | who | answer | summary |\n|---|---|---|---|---|\n"
            let sorted = items.sorted { ($0.path, order($0.method)) < ($1.path, order($1.method)) }
            for op in sorted {
                out += "| \(op.method) | `\(cell(op.path))` | \(who(op.access)) | \(op.successStatus) | \(cell(op.summary)) |\n"
            }
            for op in sorted where op.requestBody != nil || !op.errors.isEmpty || op.description != nil || op.acceptsIdempotencyKey {
                out += "\n### \(op.method) `\(op.path)`\n\n\(op.summary).\n"
                if let description = op.description { out += "\n\(description)\n" }
                if op.acceptsIdempotencyKey {
                    out += "\n`Idempotency-Key` \(op.requiresIdempotencyKey ? "required" : "accepted"): a retry answers what the first call did.\n"
                }
                if let body = op.requestBody, case .object(let properties)? = body["properties"], !properties.isEmpty {
                    let required = Set(body["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
                    out += "\n| body field | type | |\n|---|---|---|\n"
                    for (name, schema) in properties.sorted(by: { $0.key < $1.key }) {
                        out +=
                            "| `\(cell(name))` | \(type(schema)) | \(required.contains(name) ? "required. " : "")\(cell(schema["description"]?.stringValue ?? "")) |\n"
                    }
                }
                if !op.errors.isEmpty {
                    out += "\n| status | when |\n|---|---|\n"
                    for (status, text) in op.errors.sorted(by: { $0.key < $1.key }) { out += "| \(status) | \(cell(text)) |\n" }
                }
            }
        }
        return out
    }

    static func order(_ method: String) -> Int {
        ["GET": 0, "POST": 1, "PUT": 2, "PATCH": 3, "DELETE": 4][method] ?? 5
    }

    static func who(_ access: APIOperation.Access) -> String {
        switch access {
        case .public_: "anyone"
        case .authenticated(let roles): roles.isEmpty ? "any signed-in role" : roles.joined(separator: ", ")
        }
    }

    /// A JSON Schema's type in a few words: `string`, `integer or null`, `array of string`.
    static func type(_ schema: JSONValue) -> String {
        var words: [String] = []
        switch schema["type"] {
        case .string(let name)?: words = [name]
        case .array(let names)?: words = names.compactMap(\.stringValue)
        default: if let options = schema["enum"]?.arrayValue { return "one of " + options.compactMap(\.stringValue).map { "`\($0)`" }.joined(separator: ", ") }
        }
        if let options = schema["enum"]?.arrayValue, !options.isEmpty {
            return "one of " + options.compactMap(\.stringValue).map { "`\($0)`" }.joined(separator: ", ")
        }
        if words.first == "array", let items = schema["items"] { words[0] = "array of " + type(items) }
        if let format = schema["format"]?.stringValue, let first = words.first { words[0] = "\(first) (\(format))" }
        return words.isEmpty ? "any" : words.joined(separator: " or ")
    }

    static func cell(_ text: String) -> String {
        text.replacingOccurrences(of: "|", with: "\\|").replacingOccurrences(of: "\n", with: " ")
    }

    /// GitHub's heading anchor for a single-word tag.
    static func anchor(_ tag: String) -> String {
        tag.lowercased().replacingOccurrences(of: " ", with: "-")
    }
}
