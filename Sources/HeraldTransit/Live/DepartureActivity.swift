import HeraldCore
import HeraldGTFS
import HeraldNotifications
import Synchronization

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
/// follow any stop a served feed has.
struct DepartureActivitySource: LiveActivitySource {
    let service: TransitService

    func snapshot(subjectID: String, userID: String) async throws -> LiveActivitySnapshot? {
        guard let (feed, stop) = service.snapshot.stop(subjectID) else { return nil }
        let now = service.clock.now().epochMilliseconds / 1000
        return LiveActivitySnapshot(
            content: DepartureActivity.content(feed, stop: stop, now: now), ended: false, attributes: DepartureActivity.attributes(feed, stop: stop))
    }
}

extension TransitService {
    /// Registered for `departures` in the composition root.
    public var liveActivitySource: any LiveActivitySource { DepartureActivitySource(service: self) }

    /// Publishes the board of every stop that departures activities or channels follow; runs
    /// after each overlay rebuild (a realtime message, and at least once a minute as time
    /// moves on). An unchanged board is no change, so it sends nothing.
    func publishDepartureActivities(snapshot: TransitSnapshot, now: Int64) async {
        guard let liveActivities, liveActivities.config.enabled else { return }
        let stops: [String]
        do {
            stops = try await liveActivities.followedSubjects(kind: .departures)
        } catch {
            logger.warning("reading the followed stops failed", metadata: ["error": "\(String(reflecting: error))"])
            return
        }
        let boards = stops.compactMap { id -> (String, [String: JSONValue])? in
            guard let (feed, stop) = snapshot.stop(id) else { return nil }
            return (id, DepartureActivity.content(feed, stop: stop, now: now / 1000))
        }
        let changes = publishedBoards.changed(boards, now: now).map { id, board in
            LiveActivityChange(kind: .departures, subjectID: id, patch: board, asOf: now)
        }
        // Together, so they share commits (`LiveActivityService.publish` batches what arrives at once).
        for start in stride(from: 0, to: changes.count, by: 256) {
            await withTaskGroup(of: Void.self) { group in
                for change in changes[start..<min(changes.count, start + 256)] {
                    group.addTask { await liveActivities.publish(change) }
                }
            }
        }
    }
}

/// The boards this node published last, so a rebuild publishes only the stops whose board
/// changed instead of reading every followed row to find it unchanged.
///
/// Why a refresh anyway: a publish that failed (it is logged, not retried) or a newer board
/// another node published meanwhile is corrected within `refreshMs`, when the board goes
/// again (unchanged rows are no change, so that costs reads, no pushes).
final class PublishedBoards: Sendable {
    static let refreshMs: Int64 = 300_000
    private let boards = Mutex<[String: (board: [String: JSONValue], at: Int64)]>([:])

    /// The boards to publish now; forgets stops no longer followed.
    func changed(_ current: [(String, [String: JSONValue])], now: Int64) -> [(String, [String: JSONValue])] {
        boards.withLock { published in
            var next: [String: (board: [String: JSONValue], at: Int64)] = [:]
            var changed: [(String, [String: JSONValue])] = []
            for (id, board) in current {
                if let last = published[id], last.board == board, now - last.at < Self.refreshMs {
                    next[id] = last
                } else {
                    next[id] = (board, now)
                    changed.append((id, board))
                }
            }
            published = next
            return changed
        }
    }
}
