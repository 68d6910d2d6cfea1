import HTTPTypes
import HeraldCore
import Hummingbird

/// A server span per request, continuing the caller's W3C `traceparent` (docs/tracing.md).
///
/// Why not Hummingbird's `TracingMiddleware`: it hands every request header to the tracer's
/// extractor, and swift-otel logs that whole carrier (the `Authorization` header with it) when
/// a `traceparent` does not parse; and it records the query string, where WebSocket and
/// EventSource URLs carry tokens. Here the extractor sees one header, and only once it is
/// well formed (anything else starts a new trace, silently: a client cannot fill the log),
/// and a span holds the method, path, route, status and request id — no query, no headers.
/// `tracestate` is not continued.
struct TraceContextMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext

    static let traceParent = HTTPField.Name("traceparent")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let parent = request.headers[Self.traceParent].flatMap { HeraldTracing.isWellFormed($0) ? $0 : nil }
        return try await HeraldTracing.withSpan(
            "HTTP \(request.method.rawValue)", continuing: parent, ofKind: .server,
            attributes: ["http.request.method": request.method.rawValue, "url.path": request.uri.path]
        ) { span in
            let response: Response
            do {
                response = try await next(request, context)
            } catch {
                let status = (error as? any HTTPResponseError).map { Int($0.status.code) } ?? 500
                span?.describe(route: context.endpointPath, method: request.method, status: status, requestID: nil)
                throw error
            }
            span?.describe(
                route: context.endpointPath, method: request.method, status: Int(response.status.code),
                requestID: response.headers[RequestIDMiddleware.header])
            return response
        }
    }
}

extension HeraldTracing.Span {
    /// Named after the route template (`POST /api/v1/jobs/{id}`: one name per route, not per
    /// job), failed only on a server error (a 4xx is the client's, per OpenTelemetry's HTTP
    /// conventions).
    fileprivate func describe(route: String?, method: HTTPRequest.Method, status: Int, requestID: String?) {
        if let route { rename("\(method.rawValue) \(route)") }
        set("http.route", route)
        set("http.response.status_code", status)
        set("herald.request_id", requestID)
        if status >= 500 { fail("HTTP \(status)") }
    }
}
