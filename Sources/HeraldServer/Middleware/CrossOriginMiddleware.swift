import HTTPTypes
import HeraldCore
import Hummingbird

/// Applies `CORSPolicy` to every route, the Socket.IO long-polling transport included:
/// answers preflights itself (before routing, so `OPTIONS` needs no route of its own) and
/// adds the `Access-Control-*` headers to what an allowed page gets back, errors included.
struct CrossOriginMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let policy: CORSPolicy
    let clock: any HeraldClock

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin], !CORSPolicy.isSameOrigin(origin, host: request.head.authority) else {
            return try await next(request, context)
        }
        if request.method == .options, let method = request.headers[.accessControlRequestMethod] {
            switch policy.preflight(origin: origin, method: method, requestHeaders: request.headers[.accessControlRequestHeaders]) {
            case .allowed(let fields):
                return Response(status: .noContent, headers: fields)
            case .refused:
                // Outside the error middleware (so that it sees every answer): the envelope here.
                let refusal = APIError(
                    status: 403, code: .originNotAllowed,
                    message: "This origin, method or header list is not allowed to call Herald (cors.allowed_origins).")
                return Envelope.errorResponse(refusal, context: context, clock: clock)
            }
        }
        var response = try await next(request, context)
        for field in policy.responseHeaders(origin: origin) {
            response.headers[field.name] = field.value
        }
        return response
    }
}
