import HeraldPush

/// The senders of every app and provider, and the choice of one for a push: its device's app
/// and provider, and for APNs the token's environment (else the app's configured one).
///
/// Why the fallback: a provider an app leaves unconfigured is served by the log sender (in
/// development every provider is), as it was before apps existed.
public struct PushSenders: Sendable {
    let senders: [PushRoute: any PushSender]
    /// Each app's configured APNs environment, for devices that did not say theirs.
    let environments: [String: APNsEnvironment]
    let fallback: (any PushSender)?

    public init(_ senders: [PushRoute: any PushSender], environments: [String: APNsEnvironment] = [:], fallback: (any PushSender)?) {
        self.senders = senders
        self.environments = environments
        self.fallback = fallback
    }

    /// One sender per provider for the default app (what a single-app deployment has).
    public init(byProvider senders: [PushProvider: any PushSender], fallback: (any PushSender)?) {
        var routes: [PushRoute: any PushSender] = [:]
        for (provider, sender) in senders {
            if provider == .apns {
                for environment in APNsEnvironment.allCases { routes[PushRoute(provider: .apns, app: PushApps.defaultID, environment: environment)] = sender }
            } else {
                routes[PushRoute(provider: provider, app: PushApps.defaultID)] = sender
            }
        }
        self.init(routes, fallback: fallback)
    }

    /// The route a push takes.
    public func route(for message: PushMessage) -> PushRoute {
        let environment = message.provider == .apns ? (message.apnsEnvironment ?? environments[message.app] ?? .production) : nil
        return PushRoute(provider: message.provider, app: message.app, environment: environment)
    }

    public func sender(for message: PushMessage) -> (any PushSender)? {
        senders[route(for: message)] ?? fallback
    }

    /// The sender of an app's ActivityKit pushes in `environment` (nil: the app's configured
    /// one): its APNs sender, else the fallback (the log sender records them).
    public func liveActivitySender(app: String, environment: APNsEnvironment?) -> (any LiveActivitySender)? {
        let route = PushRoute(provider: .apns, app: app, environment: environment ?? environments[app] ?? .production)
        return (senders[route] ?? fallback) as? any LiveActivitySender
    }

    /// The environment of an app's tokens that did not say theirs.
    public func environment(app: String) -> APNsEnvironment {
        environments[app] ?? .production
    }

    /// The app's broadcast channel API in `environment` (channels live per app and
    /// environment at Apple): its APNs sender, else the fallback (the log sender records them).
    public func liveActivityBroadcaster(app: String, environment: APNsEnvironment) -> (any LiveActivityBroadcaster)? {
        (senders[PushRoute(provider: .apns, app: app, environment: environment)] ?? fallback) as? any LiveActivityBroadcaster
    }
}
