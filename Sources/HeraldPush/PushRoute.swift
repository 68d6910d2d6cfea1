import HeraldCore

/// An APNs environment: a token made by a development build of an app is only valid at the
/// sandbox host, one from a TestFlight or App Store build only at production.
public enum APNsEnvironment: String, ConfigChoice {
    case production
    case sandbox
}

/// Which sender takes a push: its provider, the app the device belongs to, and for APNs the
/// token's environment.
///
/// Why per app: each app of a deployment (the customer's, the driver's) is its own APNs
/// topic, often its own Firebase project and VAPID key, and a push sent with another app's
/// topic or credentials is refused (`DeviceTokenNotForTopic`) and loses the device.
public struct PushRoute: Hashable, Sendable, CustomStringConvertible {
    public var provider: PushProvider
    public var app: String
    /// Set for APNs only.
    public var environment: APNsEnvironment?

    public init(provider: PushProvider, app: String, environment: APNsEnvironment? = nil) {
        self.provider = provider
        self.app = app
        self.environment = provider == .apns ? environment : nil
    }

    public var description: String {
        "\(app)/\(provider.rawValue)" + (environment.map { "/\($0.rawValue)" } ?? "")
    }

    /// The id of the app configured at the top of `push` (`PushApps.defaultID`).
    public static let defaultApp = PushApps.defaultID
}
