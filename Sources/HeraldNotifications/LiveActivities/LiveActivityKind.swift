import HeraldCore

/// What a Live Activity follows; each kind is fed by the module that owns its state and
/// matches one `ActivityAttributes` type in the app.
public enum LiveActivityKind: String, Sendable, Codable, CaseIterable {
    /// A ride (trips): state, driver, vehicle and ETA.
    case trip
    /// A dispatch job: its status and the driver's approach.
    case job
    /// A favourite stop's next departures (transit).
    case departures

    /// Kinds whose content is the same for everyone who follows a subject, so one broadcast
    /// channel per subject serves them all (a trip or a job is one person's).
    public var broadcasts: Bool { self == .departures }
}

/// Where a Live Activity row is in its life.
public enum LiveActivityStatus: String, Sendable, Codable, CaseIterable {
    /// Takes updates (an update token), or waits to be started (a push-to-start row).
    case active
    /// The start push went out; the device's own update token arrives as a new registration.
    case started
    /// The end push went out.
    case ended
    /// APNs said the token is gone (the activity was dismissed or the app removed).
    case gone
    /// APNs refused the pushes for good (bad topic, bad payload) or retries ran out.
    case failed
    /// The app said it ended the activity itself, or its subject ended before it started.
    case cancelled
}

/// Which token a row pushes to.
public enum LiveActivityMode: String, Sendable, Codable {
    /// The activity's own update token: update and end pushes.
    case update
    /// A push-to-start token: one start push.
    case start
    /// A broadcast channel (iOS 18): one row per app, environment and subject, whose token is
    /// APNs's channel id; one push reaches every device subscribed to it.
    case channel
}

/// What a source says of a subject when an app registers an activity for it.
public struct LiveActivitySnapshot: Sendable, Equatable {
    /// The content state now (what an update would carry).
    public var content: [String: JSONValue]
    /// The subject is over: the activity is ended as soon as it registers.
    public var ended: Bool
    /// The activity's static attributes (`ActivityAttributes`' own properties), for an app
    /// that starts the activity itself from what a channel request answers.
    public var attributes: [String: JSONValue]

    public init(content: [String: JSONValue], ended: Bool, attributes: [String: JSONValue] = [:]) {
        self.content = content
        self.ended = ended
        self.attributes = attributes
    }
}

/// The module that owns a kind's state: it says who may follow a subject and what it shows now.
public protocol LiveActivitySource: Sendable {
    /// The subject's content for `userID`; nil when it does not exist or the user may not see
    /// it (the registration answers 404 either way).
    func snapshot(subjectID: String, userID: String) async throws -> LiveActivitySnapshot?
}
