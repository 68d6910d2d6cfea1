import Foundation
import HeraldCore
import HeraldGTFS
import HeraldRealtime
import Synchronization

/// Departure and vehicle changes for clients following `stop:{id}` or `route:{id}`, and the
/// status of planned itineraries for those following `itinerary:{id}` (`itinerary_update`,
/// whole, when it changes: `ItineraryWatch`), sent as the realtime data moves instead of
/// being polled.
///
/// Each node computes, for the rooms its own clients follow, the current board (a stop's next
/// departures) or the route's runs under way, compares them with what the room was last sent
/// and delivers only the entries that changed and the keys that went away:
/// `departures_update {stop_id, changed, removed, last_updated}` and
/// `route_trips_update {route_id, changed, removed, last_updated}`. The first computation
/// for a room sends everything. Every node holds the same realtime data, so each delivers to
/// its own members only (no event crosses the bus, none is stored: a client that reconnects
/// reads the current state over REST or from the native `state_sync`).
public final class LiveUpdates: Sendable {
    let hub: RealtimeHub
    let clock: any HeraldClock
    /// For the replans an itinerary's followers are offered.
    let planner: TransitConfig.PlannerConfig
    /// Per room: entry key → the entry's JSON as last sent.
    private let sent = Mutex<[String: [String: String]]>([:])
    /// Per followed itinerary: its status and what it was computed from.
    private let itineraries = Mutex<[String: ItineraryStatus]>([:])

    /// An itinerary's status is computed again only when what it reads changed: its feed
    /// version or the predictions of its own rides, or when it is older than
    /// `itineraryRefreshSeconds` (a replan also reads other runs). So an update costs in
    /// proportion to the itineraries whose runs it touched, not to all that are followed.
    struct ItineraryStatus {
        var version: String
        var predictions: [TripPrediction?]
        var computedAt: Int64
        var status: JSONValue
    }

    /// How long an itinerary's status stands when nothing it reads changed.
    public static let itineraryRefreshSeconds: Int64 = 300
    /// How many itinerary statuses were computed (not reused) since start: for tests.
    private let itineraryComputations = Atomic<Int>(0)
    public var itineraryStatusComputations: Int { itineraryComputations.load(ordering: .relaxed) }

    /// Departures a stop's room follows (the transit app's default board).
    public static let departuresPerStop = 10

    public init(hub: RealtimeHub, clock: any HeraldClock, planner: TransitConfig.PlannerConfig = .init()) {
        self.hub = hub
        self.clock = clock
        self.planner = planner
    }

    /// The entries a room shows now, keyed, in display order; nil when the room names
    /// nothing in the snapshot.
    public static func entries(
        room: String, snapshot: TransitSnapshot, now: Int64, planner: TransitConfig.PlannerConfig = .init()
    ) async -> [(key: String, value: JSONValue)]? {
        if room.hasPrefix(ItineraryWatch.prefix) {
            return [("status", await ItineraryWatch.status(String(room.dropFirst(ItineraryWatch.prefix.count)), snapshot: snapshot, planner: planner))]
        }
        if room.hasPrefix("stop:") {
            guard let (feed, stop) = snapshot.stop(String(room.dropFirst(5))) else { return nil }
            let rows = DepartureBoard(timetable: feed.timetable, overlay: feed.overlay).departures(.init(stop: stop, at: now, limit: departuresPerStop))
            return rows.map { ("\($0.tripID)|\(ServiceDate.iso($0.day))|\($0.shift)|\($0.stop)", TransitJSON.departure(feed, $0)) }
        }
        if room.hasPrefix("route:") {
            guard let (feed, route) = snapshot.route(String(room.dropFirst(6))) else { return nil }
            let runs = RouteActivity(timetable: feed.timetable, overlay: feed.overlay).runs(route: route, at: now)
            return runs.map { ("\($0.tripID)|\($0.instance.map { ServiceDate.iso($0.day) } ?? "")", TransitJSON.run(feed, $0)) }
        }
        return nil
    }

    /// Compares every followed room with what it was last sent and delivers the differences.
    public func publish(snapshot: TransitSnapshot) async {
        let now = clock.now()
        let seconds = Int64(now.timeIntervalSince1970)
        let rooms = hub.localRooms.filter { $0.hasPrefix("stop:") || $0.hasPrefix("route:") || $0.hasPrefix(ItineraryWatch.prefix) }
        var events: [RealtimeEvent] = []
        var next: [String: [String: String]] = [:]
        let previous = sent.withLock { $0 }
        let cached = itineraries.withLock { $0 }
        var nextItineraries: [String: ItineraryStatus] = [:]
        for room in rooms {
            let ordered: [(key: String, value: JSONValue)]
            if room.hasPrefix(ItineraryWatch.prefix) {
                let status = await itineraryStatus(room, snapshot: snapshot, now: seconds, cached: cached[room])
                nextItineraries[room] = status
                ordered = [("status", status.status)]
            } else {
                guard let entries = await Self.entries(room: room, snapshot: snapshot, now: seconds, planner: planner) else { continue }
                ordered = entries
            }
            let entries = Dictionary(ordered) { first, _ in first }
            var texts: [String: String] = [:]
            for (key, value) in entries {
                var writer = JSONWriter()
                writer.write(value)
                texts[key] = writer.string
            }
            next[room] = texts
            let before = previous[room] ?? [:]
            let changed = ordered.map(\.key).filter { before[$0] != texts[$0] }
            let removed = before.keys.filter { texts[$0] == nil }.sorted()
            guard !changed.isEmpty || !removed.isEmpty else { continue }
            if room.hasPrefix(ItineraryWatch.prefix), let status = entries["status"] {
                // An itinerary's status goes whole, as `itinerary_update`.
                var writer = JSONWriter()
                writer.write(status)
                events.append(RealtimeEvent(room: room, seq: nil, name: "itinerary_update", payloadJSON: writer.string, createdAt: now.epochMilliseconds))
                continue
            }
            let isStop = room.hasPrefix("stop:")
            let id = String(room.drop { $0 != ":" }.dropFirst())
            let payload: JSONValue = [
                isStop ? "stop_id" : "route_id": .string(id), "changed": .array(changed.compactMap { entries[$0] }),
                "removed": .array(removed.map(Self.removedKey)), "last_updated": .string(Timestamp.string(now)),
            ]
            var writer = JSONWriter()
            writer.write(payload)
            events.append(
                RealtimeEvent(
                    room: room, seq: nil, name: isStop ? "departures_update" : "route_trips_update", payloadJSON: writer.string,
                    createdAt: now.epochMilliseconds))
        }
        sent.withLock { $0 = next }
        itineraries.withLock { $0 = nextItineraries }
        for event in events { await hub.deliverLocally(event) }
    }

    /// The status of a followed itinerary: the cached one while nothing it reads changed.
    func itineraryStatus(_ room: String, snapshot: TransitSnapshot, now: Int64, cached: ItineraryStatus?) async -> ItineraryStatus {
        let text = String(room.dropFirst(ItineraryWatch.prefix.count))
        let id = ItineraryID(text)
        let feed = id.flatMap { $0.feed(in: snapshot) }
        let version = feed?.version.id ?? ""
        let predictions = (id?.rides ?? []).map { ride in feed?.overlay.predictions[TripInstance(trip: ride.trip, day: ride.day, shift: ride.shift)] }
        if let cached, cached.version == version, cached.predictions == predictions, now - cached.computedAt < Self.itineraryRefreshSeconds {
            return cached
        }
        itineraryComputations.wrappingAdd(1, ordering: .relaxed)
        return ItineraryStatus(
            version: version, predictions: predictions, computedAt: now, status: await ItineraryWatch.status(text, snapshot: snapshot, planner: planner))
    }

    /// A removed entry as clients match it: the trip and its service date.
    static func removedKey(_ key: String) -> JSONValue {
        let parts = key.split(separator: "|", omittingEmptySubsequences: false)
        return ["trip_id": .string(String(parts.first ?? "")), "service_date": parts.count > 1 && !parts[1].isEmpty ? .string(String(parts[1])) : .null]
    }
}
