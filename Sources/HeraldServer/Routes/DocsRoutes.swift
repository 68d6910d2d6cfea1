import Foundation
import HeraldCore
import Hummingbird

/// The OpenAPI document and a self-contained docs page (no CDN: it must work offline and
/// inside private networks).
struct DocsRoutes {
    let document: JSONValue
    let operations: [APIOperation]

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = (try? encoder.encode(document)) ?? Data()
        let html = Self.page(operations)
        api.get("/openapi.json") { _, _ in
            Envelope.jsonResponse(json, status: .ok, headers: [:])
        }
        api.get("/docs") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/html; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: html))
            )
        }
    }

    static func page(_ operations: [APIOperation]) -> String {
        func escape(_ text: String) -> String {
            text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
                .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
        }
        let grouped = Dictionary(grouping: operations, by: \.tag).sorted { $0.key < $1.key }
        var body = ""
        for (tag, items) in grouped {
            body += "<h2>\(escape(tag))</h2>\n<table>\n"
            for op in items.sorted(by: { ($0.path, $0.method) < ($1.path, $1.method) }) {
                let access: String
                switch op.access {
                case .public_: access = "public"
                case .authenticated(let roles): access = roles.isEmpty ? "any signed-in role" : roles.joined(separator: ", ")
                }
                body += "<tr><td class=m>\(op.method)</td><td><code>\(escape(op.path))</code></td><td>\(escape(op.summary))</td><td class=a>\(escape(access))</td></tr>\n"
            }
            body += "</table>\n"
        }
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8"><title>Herald API</title>
            <style>body{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}
            table{border-collapse:collapse;width:100%}td{border-bottom:1px solid #ddd;padding:.4rem .6rem;vertical-align:top}
            td.m{font-weight:600;width:4rem}td.a{color:#666;width:12rem}code{font-size:.95em}</style></head>
            <body><h1>Herald API</h1>
            <p>Machine-readable document: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI 3.1).
            Authenticated routes take <code>Authorization: Bearer &lt;JWT&gt;</code>. Answers are
            <code>{"data", "meta"}</code>; errors are <code>{"error": {"code", "message", "details"}, "meta"}</code>.</p>
            \(body)</body></html>
            """
    }

    static let operations: [APIOperation] = [
        APIOperation(
            "GET", "/api/v1/openapi.json", summary: "This API's OpenAPI 3.1 document", tag: "meta",
            access: .public_, enveloped: false),
        APIOperation(
            "GET", "/api/v1/docs", summary: "Human-readable API documentation", tag: "meta",
            access: .public_, response: Schema.string(), enveloped: false, contentType: "text/html"),
    ]
}
