import HTTPTypes
import HeraldCore
import Hummingbird

/// `TRACE` and `CONNECT` get 405 on every path, before any route is looked up.
///
/// Why: no route serves them, and an unknown path would otherwise answer 404, which tells
/// scanners the method is fine. `TRACE` echoing a request is a classic way to read a
/// browser's cookies and headers back (cross-site tracing); it is refused, not echoed.
struct MethodGuardMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method != .trace, request.method != .connect else {
            throw APIError(status: 405, code: .methodNotAllowed, message: "This method is not allowed here.")
        }
        return try await next(request, context)
    }
}
