import HTTPTypes
import HeraldCore
import Hummingbird

/// Tells builds older than the configured minimum to update (426 `APP_UPDATE_REQUIRED`).
///
/// Why only when both headers are present and parse: web clients and other backends send
/// no app version and must not be locked out; an unparseable version is let through rather
/// than bricking an app over a header typo.
struct AppVersionGateMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let minimums: [String: (version: SemanticVersion, text: String, storeURL: String?)]

    static let appVersion = HTTPField.Name("X-App-Version")!
    static let platform = HTTPField.Name("X-Platform")!

    init(config: AppVersionConfig) {
        var minimums: [String: (version: SemanticVersion, text: String, storeURL: String?)] = [:]
        for (platform, minimum) in config.platforms {
            if let version = SemanticVersion(minimum.minimumVersion) {
                minimums[platform.lowercased()] = (version, minimum.minimumVersion, minimum.appStoreUrl)
            }
        }
        self.minimums = minimums
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if !minimums.isEmpty,
            let platform = request.headers[Self.platform]?.lowercased(),
            let minimum = minimums[platform],
            let version = request.headers[Self.appVersion].flatMap(SemanticVersion.init),
            version < minimum.version
        {
            var details: [String: JSONValue] = ["minimum_version": .string(minimum.text)]
            details["app_store_url"] = minimum.storeURL.map(JSONValue.string) ?? .null
            throw APIError(status: 426, code: .appUpdateRequired, message: "Please update to the latest version.", details: .object(details))
        }
        return try await next(request, context)
    }
}
