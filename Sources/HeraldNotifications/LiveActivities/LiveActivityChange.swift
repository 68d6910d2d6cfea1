import HeraldCore
import HeraldPush

/// A change to every Live Activity following one subject, published by the module that owns it.
public struct LiveActivityChange: Sendable, Equatable {
    public var kind: LiveActivityKind
    public var subjectID: String
    /// Top-level keys of the content state to set (the rest stay): a transition sends the
    /// state, an ETA sample only the ETA.
    public var patch: [String: JSONValue]
    /// A change a person must see now: priority 10, sent without waiting for the routine interval.
    public var important: Bool
    /// Shown with the update (the activity expands and sounds); only with important changes.
    public var alert: LiveActivityAlert?
    /// The subject is over: this push ends the activity.
    public var ends: Bool
    /// When the content was computed (epoch ms), for a module whose nodes all compute it (a
    /// stop's board): a change older than what a row shows is dropped, so a node that came
    /// late never puts back a departure that already left.
    public var asOf: Int64?

    public init(
        kind: LiveActivityKind, subjectID: String, patch: [String: JSONValue], important: Bool = false, alert: LiveActivityAlert? = nil,
        ends: Bool = false, asOf: Int64? = nil
    ) {
        self.asOf = asOf
        self.kind = kind
        self.subjectID = subjectID
        self.patch = patch
        self.important = important || alert != nil || ends
        self.alert = alert
        self.ends = ends
    }
}

/// Starting a subject's Live Activity on its users' devices through their push-to-start tokens.
public struct LiveActivityStart: Sendable, Equatable {
    public var kind: LiveActivityKind
    public var subjectID: String
    public var userIDs: [String]
    /// The activity's static attributes (`ActivityAttributes`' own properties).
    public var attributes: [String: JSONValue]
    /// The first content state.
    public var content: [String: JSONValue]
    /// Apple requires an alert on a start push.
    public var alert: LiveActivityAlert

    public init(
        kind: LiveActivityKind, subjectID: String, userIDs: [String], attributes: [String: JSONValue], content: [String: JSONValue],
        alert: LiveActivityAlert
    ) {
        self.kind = kind
        self.subjectID = subjectID
        self.userIDs = userIDs
        self.attributes = attributes
        self.content = content
        self.alert = alert
    }
}
