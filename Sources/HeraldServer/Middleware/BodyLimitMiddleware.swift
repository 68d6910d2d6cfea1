import HeraldCore
import Hummingbird

/// Refuses oversized bodies before reading them and bodies that are not JSON.
///
/// Why both: a declared `Content-Length` over the limit is answered at once (413) without
/// reading a byte; a chunked body is bounded when it is collected (`RequestBody`). A body
/// in another media type would otherwise fail later with a confusing JSON error. A few
/// routes take another media type (a GTFS-Realtime protobuf, a GTFS zip) with a limit of
/// their own (`binaryRoutes`).
struct BodyLimitMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let maxBodyBytes: Int
    /// `"METHOD /api/v1/path/{param}"` → the media types it takes besides JSON, and its limit.
    let binaryRoutes: [String: BinaryBody]
    /// Routes whose JSON body may come labelled `text/plain`: a browser's `fetch` with a string
    /// body and no `Content-Type` (the notification design's web client registering for
    /// pushes) sends that
    /// label. It is safe because these routes need an `Authorization` header, which a browser
    /// never sends cross-origin without a CORS preflight, so the label opens no CSRF path.
    let plainTextJSONRoutes: Set<String>
    /// The paths (templates) of `binaryRoutes`, to skip building a route's name for the rest.
    private let binaryPaths: Set<String>

    init(maxBodyBytes: Int, binaryRoutes: [String: BinaryBody] = [:], plainTextJSONRoutes: Set<String> = []) {
        self.maxBodyBytes = maxBodyBytes
        self.binaryRoutes = binaryRoutes
        self.plainTextJSONRoutes = plainTextJSONRoutes
        binaryPaths = Set(binaryRoutes.keys.compactMap { $0.split(separator: " ", maxSplits: 1).last.map(String.init) })
    }

    struct BinaryBody: Sendable {
        let mediaTypes: Set<String>
        let maxBytes: Int
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        // The route's name is built only where it can matter (most requests take JSON on a
        // route with no binary body): this runs on every request.
        let routeName = { "\(request.method.rawValue) \(context.endpointPath ?? request.uri.path)" }
        let binary = binaryRoutes.isEmpty || !binaryPaths.contains(context.endpointPath ?? request.uri.path) ? nil : binaryRoutes[routeName()]
        context.maxBodyBytes = binary?.maxBytes ?? maxBodyBytes
        if let length = request.headers[.contentLength].flatMap(Int.init) {
            if length > context.maxBodyBytes { throw APIError.payloadTooLarge(limit: context.maxBodyBytes) }
            if length > 0, let type = request.headers[.contentType], !Self.isJSON(type) {
                let route = routeName()
                let mediaType = Self.mediaType(type)
                if mediaType == "text/plain", plainTextJSONRoutes.contains(route) { return try await next(request, context) }
                guard let binary, binary.mediaTypes.contains(mediaType) else {
                    let accepted = ["application/json"] + (binary?.mediaTypes.sorted() ?? [])
                    throw APIError(
                        status: 415, code: .unsupportedMediaType,
                        message: binary == nil
                            ? "Request bodies must be JSON (Content-Type: application/json)."
                            : "This route takes \(accepted.joined(separator: " or ")).")
                }
            }
        }
        return try await next(request, context)
    }

    static func mediaType(_ contentType: String) -> String {
        contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
    }

    static func isJSON(_ contentType: String) -> Bool {
        // What nearly every client sends, without splitting and trimming.
        if contentType == "application/json" || contentType == "application/json; charset=utf-8" { return true }
        let mediaType = mediaType(contentType)
        return mediaType == "application/json" || (mediaType.hasPrefix("application/") && mediaType.hasSuffix("+json"))
    }
}
