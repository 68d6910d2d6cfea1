import HeraldCore
import HeraldStorage
import Hummingbird
import Logging
import NIOCore

/// Turns every error thrown below it into the error envelope.
///
/// Why here and nowhere else: routes throw `APIError` and never format errors themselves.
/// Hummingbird's own errors (404, 413 from a body limit) get their stable code. Anything
/// else is internal: its detail goes to the log with the request id and the client gets a
/// generic 500.
struct ErrorEnvelopeMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let clock: any HeraldClock
    /// Where 5xx answers are noted for the operations console.
    var errors: RecentErrors?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let apiError = Self.apiError(for: error, logger: context.logger)
            if apiError.status >= 500 {
                errors?.record(
                    .init(
                        at: clock.now().epochMilliseconds, method: request.method.rawValue, path: request.uri.path, status: apiError.status,
                        code: apiError.code.rawValue, requestID: context.requestID))
            }
            return Envelope.errorResponse(apiError, context: context, clock: clock)
        }
    }

    static func apiError(for error: any Error, logger: Logger) -> APIError {
        switch error {
        case let apiError as APIError:
            return apiError
        case let unavailable as DatabaseUnavailable:
            logger.warning("database unavailable", metadata: ["reason": "\(unavailable.reason)"])
            return APIError(
                status: 503, code: .serviceUnavailable, message: "The service is briefly unavailable; retry shortly.",
                headers: ["Retry-After": "1"])
        case is NIOTooManyBytesError:
            return APIError(status: 413, code: .payloadTooLarge, message: "The request body is too large.")
        case let httpError as HTTPError:
            switch httpError.status.code {
            case 404: return .notFound("No route matches this path.")
            case 405: return APIError(status: 405, code: .methodNotAllowed, message: "This method is not allowed here.")
            case 413: return APIError(status: 413, code: .payloadTooLarge, message: "The request body is too large.")
            case 400: return APIError(status: 400, code: .validationFailed, message: "The request is malformed.")
            case 401: return .unauthorized()
            case 403: return .forbidden()
            default:
                logger.error("unhandled HTTP error", metadata: ["status": "\(httpError.status.code)", "error": "\(String(reflecting: httpError))"])
                return httpError.status.code >= 500
                    ? .internalServerError : APIError(status: Int(httpError.status.code), code: .validationFailed, message: "The request was refused.")
            }
        default:
            logger.error("internal error", metadata: ["error": "\(String(reflecting: error))"])
            return .internalServerError
        }
    }
}
