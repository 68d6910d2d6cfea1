/// Room names (a native channel, a Socket.IO room), one constructor per kind.
///
/// Why here: the modules that publish to a room (dispatch, trips, notifications, transit) and
/// the gateway that admits subscribers to it must spell it alike; before, each module built
/// its own `"user:"` and the gateway checked its own copy.
public enum RoomName {
    /// A user's own room: their notifications and personal events; every connection of the
    /// user is in it, and no one else may join it.
    public static func user(_ userID: String) -> String { "user:" + userID }
    /// A dispatch job's followers (its customer, the assigned driver, operators).
    public static func job(_ jobID: String) -> String { "job:" + jobID }
    /// A ride's parties.
    public static func trip(_ tripID: String) -> String { "trip:" + tripID }
    /// A transit stop's live departures.
    public static func stop(_ stopID: String) -> String { "stop:" + stopID }
    /// A transit route's runs under way.
    public static func route(_ routeID: String) -> String { "route:" + routeID }
}
