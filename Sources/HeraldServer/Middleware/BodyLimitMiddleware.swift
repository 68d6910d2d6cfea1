import HeraldCore
import Hummingbird

/// Refuses oversized bodies before reading them and bodies that are not JSON.
///
/// Why both: a declared `Content-Length` over the limit is answered at once (413) without
/// reading a byte; a chunked body is bounded when it is collected (`RequestBody`). A body
/// in another media type would otherwise fail later with a confusing JSON error.
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let maxBodyBytes: Int

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.maxBodyBytes = maxBodyBytes
        if let length = request.headers[.contentLength].flatMap(Int.init) {
            if length > maxBodyBytes { throw APIError.payloadTooLarge(limit: maxBodyBytes) }
            if length > 0, let type = request.headers[.contentType], !Self.isJSON(type) {
                throw APIError(
                    status: 415, code: .unsupportedMediaType,
                    message: "Request bodies must be JSON (Content-Type: application/json)."
                )
            }
        }
        return try await next(request, context)
    }

    static func isJSON(_ contentType: String) -> Bool {
        let mediaType = contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        return mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
    }
}
