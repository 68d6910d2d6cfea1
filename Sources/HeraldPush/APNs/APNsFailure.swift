/// APNs' documented error reasons ("Handling notification responses from APNs"), each a case,
/// as APNSwift types them, plus what the table does not list.
///
/// Why the table is here rather than in the classifier: which reasons mean a dead token and
/// which are worth a retry are properties of the reason, stated next to it.
public enum APNsFailure: Sendable, Hashable, CustomStringConvertible {
    // 400
    case badCollapseID, badDeviceToken, badExpirationDate, badMessageID, badPriority, badTopic, deviceTokenNotForTopic
    case duplicateHeaders, idleTimeout, invalidPushType, missingDeviceToken, missingTopic, payloadEmpty, topicDisallowed
    // 403
    case badCertificate, badCertificateEnvironment, expiredProviderToken, forbidden, invalidProviderToken, missingProviderToken
    case unrelatedKeyIDInToken, badEnvironmentKeyIDInToken
    // 404, 405
    case badPath, methodNotAllowed
    // 410
    case expiredToken, unregistered
    // 413
    case payloadTooLarge
    // 429
    case tooManyProviderTokenUpdates, tooManyRequests
    // 500, 503
    case internalServerError, serviceUnavailable, shutdown
    /// A reason Apple's table does not list, as sent; without one, `HTTP<status>`.
    case unlisted(status: Int, reason: String?)
    /// A 410 for a token the device registered again after APNs saw it go: the registration
    /// is newer than the answer, so the device is kept and only this push is dropped.
    indirect case goneBeforeReRegistration(APNsFailure)

    /// The reasons in Apple's table, in its order.
    public static let listed: [APNsFailure] = [
        .badCollapseID, .badDeviceToken, .badExpirationDate, .badMessageID, .badPriority, .badTopic, .deviceTokenNotForTopic,
        .duplicateHeaders, .idleTimeout, .invalidPushType, .missingDeviceToken, .missingTopic, .payloadEmpty, .topicDisallowed,
        .badCertificate, .badCertificateEnvironment, .expiredProviderToken, .forbidden, .invalidProviderToken, .missingProviderToken,
        .unrelatedKeyIDInToken, .badEnvironmentKeyIDInToken, .badPath, .methodNotAllowed, .expiredToken, .unregistered,
        .payloadTooLarge, .tooManyProviderTokenUpdates, .tooManyRequests, .internalServerError, .serviceUnavailable, .shutdown,
    ]
    private static let byName = Dictionary(uniqueKeysWithValues: listed.map { ($0.description, $0) })

    /// The answer's `reason` (or its absence) under `status`.
    public init(status: Int, reason: String?) {
        self = reason.flatMap { Self.byName[$0] } ?? .unlisted(status: status, reason: reason)
    }

    /// The token will never work again.
    public var meansTokenGone: Bool {
        switch self {
        case .badDeviceToken, .deviceTokenNotForTopic, .unregistered, .expiredToken: true
        default: false
        }
    }

    /// Worth another try later.
    public var isTransient: Bool {
        switch self {
        case .tooManyRequests, .tooManyProviderTokenUpdates, .idleTimeout, .internalServerError, .serviceUnavailable, .shutdown: true
        default: false
        }
    }

    /// Apple's spelling, stored with the delivery.
    public var description: String {
        switch self {
        case .badCollapseID: "BadCollapseId"
        case .badDeviceToken: "BadDeviceToken"
        case .badExpirationDate: "BadExpirationDate"
        case .badMessageID: "BadMessageId"
        case .badPriority: "BadPriority"
        case .badTopic: "BadTopic"
        case .deviceTokenNotForTopic: "DeviceTokenNotForTopic"
        case .duplicateHeaders: "DuplicateHeaders"
        case .idleTimeout: "IdleTimeout"
        case .invalidPushType: "InvalidPushType"
        case .missingDeviceToken: "MissingDeviceToken"
        case .missingTopic: "MissingTopic"
        case .payloadEmpty: "PayloadEmpty"
        case .topicDisallowed: "TopicDisallowed"
        case .badCertificate: "BadCertificate"
        case .badCertificateEnvironment: "BadCertificateEnvironment"
        case .expiredProviderToken: "ExpiredProviderToken"
        case .forbidden: "Forbidden"
        case .invalidProviderToken: "InvalidProviderToken"
        case .missingProviderToken: "MissingProviderToken"
        case .unrelatedKeyIDInToken: "UnrelatedKeyIdInToken"
        case .badEnvironmentKeyIDInToken: "BadEnvironmentKeyIdInToken"
        case .badPath: "BadPath"
        case .methodNotAllowed: "MethodNotAllowed"
        case .expiredToken: "ExpiredToken"
        case .unregistered: "Unregistered"
        case .payloadTooLarge: "PayloadTooLarge"
        case .tooManyProviderTokenUpdates: "TooManyProviderTokenUpdates"
        case .tooManyRequests: "TooManyRequests"
        case .internalServerError: "InternalServerError"
        case .serviceUnavailable: "ServiceUnavailable"
        case .shutdown: "Shutdown"
        case .unlisted(let status, let reason): reason ?? "HTTP\(status)"
        case .goneBeforeReRegistration(let reason): "\(reason) (token re-registered since)"
        }
    }
}
