import HTTPTypes
import HeraldRealtime
import Hummingbird
import NIOCore

/// One Engine.IO endpoint on the HTTP server: its long-polling routes and its WebSocket
/// upgrades, at `path` (`/socket.io` for Herald).
public struct EngineEndpoint: Sendable {
    public let path: String
    public let engine: EngineServer

    public init(path: String, engine: EngineServer) {
        self.path = path.hasSuffix("/") ? String(path.dropLast()) : path
        self.engine = engine
    }

    public func addRoutes<Context: RequestContext>(to router: Router<Context>) {
        let engine = self.engine
        let maxBody = engine.configuration.maxPayload
        let handler: @Sendable (Request, Context) async throws -> Response = { request, _ in
            let query = QueryString.split(request.uri.description).query
            var body: ByteBuffer?
            if request.method == .post {
                var request = request
                do {
                    body = try await request.collectBody(upTo: maxBody)
                } catch {
                    return Self.response(EngineHTTPResponse(status: 413, contentType: "application/json", body: #"{"code":3,"message":"Bad request"}"#))
                }
            }
            return Self.response(await engine.handlePolling(method: request.method.rawValue, query: query, body: body))
        }
        router.get(RouterPath(path), use: handler)
        router.post(RouterPath(path), use: handler)
        router.put(RouterPath(path), use: handler)
    }

    static func response(_ answer: EngineHTTPResponse) -> Response {
        Response(
            status: HTTPResponse.Status(code: answer.status),
            headers: [.contentType: answer.contentType, .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(string: answer.body)))
    }

    /// What becomes of a WebSocket upgrade to `uri`; nil when the request is not for this
    /// endpoint. A protocol version or transport it does not serve is refused with
    /// Engine.IO's own error body.
    public func decide(uri: String) -> WebSocketDecision? {
        let (requestPath, query) = QueryString.split(uri)
        let normalized = requestPath.hasSuffix("/") ? requestPath.dropLast() : requestPath
        guard normalized == path else { return nil }
        if let problem = engine.webSocketProblem(query: query) {
            return .refuse(WebSocketRefusal(status: problem.status, body: problem.body))
        }
        let engine = self.engine
        return .accept { transport in engine.acceptWebSocket(query: query, transport: transport) }
    }
}
