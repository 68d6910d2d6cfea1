import HeraldCore
import HeraldGTFS
import HeraldNotifications

/// A stop's next departures as a Live Activity (`departures`): the content every follower of
/// the stop shows, so one broadcast channel per stop serves them all.
///
/// Why times and not minutes: the activity counts down on the device (`Text(date, style:
/// .relative)`), so the content changes only when the board does (a departure leaves, a
/// prediction moves, a run is cancelled), not every minute.
public enum DepartureActivity {
    /// Departures the content lists (five keep the push far under Apple's 4 KB).
    public static let departuresShown = 5

    /// The board at `now` (epoch seconds): `stop_id` and `departures`, each with `trip_id`,
    /// `route_short_name`, `headsign`, `scheduled_at` / `expected_at` (epoch seconds; the
    /// latter null without a prediction), `delay_seconds`, `cancelled` and `platform`.
    public static func content(_ feed: LoadedFeed, stop: Int32, now: Int64) -> [String: JSONValue] {
        let timetable = feed.timetable
        let rows = DepartureBoard(timetable: timetable, overlay: feed.overlay).departures(.init(stop: stop, at: now, limit: departuresShown))
        let departures: [JSONValue] = rows.map { row in
            let route = row.route >= 0 ? timetable.feed.routes[Int(row.route)] : nil
            let platform = timetable.feed.stops[Int(row.stop)].platformCode
            return [
                "trip_id": .string(row.tripID), "route_short_name": route?.shortName.map(JSONValue.string) ?? .null,
                "headsign": row.headsign.map(JSONValue.string) ?? .null, "scheduled_at": .number(Double(row.scheduled)),
                "expected_at": row.estimated.map { .number(Double($0)) } ?? .null, "delay_seconds": row.delay.map { .number(Double($0)) } ?? .null,
                "cancelled": .bool(row.cancelled), "platform": platform.map(JSONValue.string) ?? .null,
            ]
        }
        return ["stop_id": .string(timetable.feed.stops[Int(stop)].id), "departures": .array(departures)]
    }

    /// The static attributes: the stop's id and name, and the feed it is from.
    public static func attributes(_ feed: LoadedFeed, stop: Int32) -> [String: JSONValue] {
        let s = feed.timetable.feed.stops[Int(stop)]
        return ["stop_id": .string(s.id), "stop_name": s.name.map(JSONValue.string) ?? .null, "feed": .string(feed.name)]
    }
}

/// The transit module's answer to a departures activity or channel: any signed-in user may
/// follow any stop a served feed has. Registered for `departures` in the composition root
/// (`TransitService.liveActivitySource`).
struct DepartureActivitySource: LiveActivitySource {
    let served: ServedFeeds
    let clock: any HeraldClock

    func snapshot(subjectID: String, userID: String) async throws -> LiveActivitySnapshot? {
        guard let (feed, stop) = served.snapshot.stop(subjectID) else { return nil }
        let now = clock.now().epochMilliseconds / 1000
        return LiveActivitySnapshot(
            content: DepartureActivity.content(feed, stop: stop, now: now), ended: false, attributes: DepartureActivity.attributes(feed, stop: stop))
    }
}
