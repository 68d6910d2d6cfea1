import Crypto
import Foundation
import HeraldCore
import Hummingbird

/// The OpenAPI document, and the docs page: ReDoc rendering it, from the script the binary
/// ships (no CDN: it must work offline and inside private networks). A binary copied without
/// its resources serves the plain list of operations instead (`/api/v1/docs/operations` always).
struct DocsRoutes {
    let document: JSONValue
    let operations: [APIOperation]

    static let redocFiles = ["redoc.standalone.js", "redoc.standalone.js.LICENSE.txt", "LICENSE-redoc"]

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let json = (try? encoder.encode(document)) ?? Data()
        let list = Self.page(operations)
        let redoc = PackageResources.load("DocsResources", sourceDirectory: URL(fileURLWithPath: #filePath).deletingLastPathComponent(), files: Self.redocFiles)
        let script = redoc["redoc.standalone.js"]
        let scriptTag = script.map { "\"" + SHA256.hash(data: $0).prefix(8).map { String(format: "%02x", $0) }.joined() + "\"" }
        api.get("/openapi.json") { _, _ in
            Envelope.jsonResponse(json, status: .ok, headers: [:])
        }
        api.get("/docs") { _, _ in
            Self.html(script == nil ? list : Self.redocPage)
        }
        api.get("/docs/operations") { _, _ in
            Self.html(list)
        }
        api.get("/docs/redoc.standalone.js") { request, _ in
            guard let script, let scriptTag else {
                throw APIError(status: 404, code: "NOT_FOUND", message: "This binary was installed without its docs resources.")
            }
            if request.headers[.ifNoneMatch] == scriptTag { return Response(status: .notModified, headers: [.eTag: scriptTag]) }
            return Response(
                status: .ok, headers: [.contentType: "text/javascript; charset=utf-8", .cacheControl: "public, max-age=86400", .eTag: scriptTag],
                body: .init(byteBuffer: ByteBuffer(bytes: script)))
        }
    }

    static func html(_ text: String) -> Response {
        Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// ReDoc's page: the document at /api/v1/openapi.json, fonts the system's own.
    static let redocPage = """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>Herald API</title>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <style>body{margin:0}</style></head>
        <body><redoc spec-url="/api/v1/openapi.json" hide-download-button="false"
          theme='{"typography":{"fontFamily":"system-ui, sans-serif","headings":{"fontFamily":"system-ui, sans-serif"}}}'></redoc>
        <noscript><p>This page needs JavaScript; the list of operations is at <a href="/api/v1/docs/operations">/api/v1/docs/operations</a>.</p></noscript>
        <script src="/api/v1/docs/redoc.standalone.js"></script></body></html>
        """

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
                body +=
                    "<tr><td class=m>\(op.method)</td><td><code>\(escape(op.path))</code></td><td>\(escape(op.summary))</td><td class=a>\(escape(access))</td></tr>\n"
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
            "GET", "/api/v1/docs", summary: "Human-readable API documentation (ReDoc over the OpenAPI document)", tag: "meta",
            access: .public_, response: Schema.string(), enveloped: false, contentType: "text/html"),
        APIOperation(
            "GET", "/api/v1/docs/operations", summary: "The operations as a plain HTML list (no script)", tag: "meta",
            access: .public_, response: Schema.string(), enveloped: false, contentType: "text/html"),
        APIOperation(
            "GET", "/api/v1/docs/redoc.standalone.js", summary: "ReDoc's script, shipped with the binary", tag: "meta",
            access: .public_, response: Schema.string(), enveloped: false, errors: [404: "Installed without its resources (`NOT_FOUND`)"],
            contentType: "text/javascript"),
    ]
}
