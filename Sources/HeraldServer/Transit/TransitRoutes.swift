import Crypto
import Foundation
import HTTPTypes
import HeraldCore
import HeraldGTFS
import HeraldNotifications
import HeraldTransit
import Hummingbird

/// The transit API contract over REST: stops, departures, routes, alerts and the feed version, open to
/// anyone (rate-limited per IP, more per user); favourites and device registration for
/// signed-in users; realtime intake, alerts and imports for backends and operators.
struct TransitRoutes {
    let transit: TransitService
    let imports: TransitImportRunner
    let alertActions: AlertRiderActions
    let registry: DeviceRegistry
    /// The notification preferences `/user/settings` renames.
    let preferences: PreferenceEditor
    let clock: any HeraldClock
    /// `server.public_url`: makes download links absolute.
    let publicURL: String?

    func respond(
        _ value: JSONValue, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:], meta: [String: JSONValue] = [:], _ context: HeraldRequestContext
    ) throws -> Response {
        try Envelope.response(value, status: status, headers: headers, context: context, clock: clock, meta: meta)
    }

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        addStopRoutes(to: api)
        addRouteRoutes(to: api)
        addAlertRoutes(to: api)
        addAlertActionRoutes(to: api)
        addFeedRoutes(to: api)
        addUserRoutes(to: api)
        addSettingsRoutes(to: api)
        addBackendRoutes(to: api)
        addPlanRoutes(to: api)
    }

    /// The snapshot answers read, or 503 while no feed is loaded.
    func loaded() throws -> TransitSnapshot {
        let snapshot = transit.snapshot
        guard !snapshot.isEmpty else { throw TransitError.noTimetable }
        return snapshot
    }

    static func pathID(_ context: HeraldRequestContext, _ name: String = "id") throws -> String {
        let raw = try context.parameters.require(name)
        return raw.removingPercentEncoding ?? raw
    }

    /// A weak ETag naming the feed versions served and the query (answers that change only
    /// when a new version is loaded).
    func etag(_ snapshot: TransitSnapshot, _ request: Request) -> String {
        let versions = snapshot.feeds.map(\.version.id).joined(separator: ",")
        let digest = SHA256.hash(data: Data((versions + "|" + request.uri.path + "?" + (request.uri.query ?? "")).utf8))
        return "W/\"" + digest.prefix(12).map { String(format: "%02x", $0) }.joined() + "\""
    }

    static let cacheable = "public, max-age=60"

    // MARK: Stops

    func addStopRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.get("/stops/nearby") { request, context in
            var q = QueryReader(request)
            let lat = q.double("lat", -90...90, required: true)
            let lon = q.double("lon", -180...180, required: true)
            let radius = q.integer("radius", 50...2000, default: 500)
            let limit = q.integer("limit", 1...50, default: 20)
            try q.validate()
            let snapshot = try loaded()
            // Stations once, with their platforms inside (`NearbyPlaces`).
            var found: [(feed: LoadedFeed, place: NearbyPlaces.Place)] = []
            for feed in snapshot.feeds {
                for place in NearbyPlaces.find(in: feed.timetable, latitude: lat!, longitude: lon!, radiusMeters: Double(radius), limit: limit) {
                    found.append((feed, place))
                }
            }
            found.sort { $0.place.meters < $1.place.meters }
            let stops = found.prefix(limit).map { TransitJSON.nearbyPlace($0.feed, $0.place) }
            return try respond(["stops": .array(Array(stops)), "count": .number(Double(stops.count))], context)
        }
        api.get("/stops/{id}") { request, context in
            let id = try Self.pathID(context)
            let snapshot = try loaded()
            guard let (feed, stop) = snapshot.stop(id) else { throw TransitError.stopNotFound(id) }
            let tag = etag(snapshot, request)
            if ConditionalGet.matches(request, tag) { return ConditionalGet.notModified(tag, cacheControl: Self.cacheable) }
            return try respond(TransitJSON.stopDetail(feed, stop), headers: [.eTag: tag, .cacheControl: Self.cacheable], context)
        }
        api.get("/stops/{id}/departures") { request, context in
            let id = try Self.pathID(context)
            var q = QueryReader(request)
            let limit = q.integer("limit", 1...50, default: 10)
            let routeID = q.identifier("route_id")
            let direction = q.integer("direction_id", 0...1)
            let at = q.time("at")
            try q.validate()
            let snapshot = try loaded()
            guard let (feed, stop) = snapshot.stop(id) else { throw TransitError.stopNotFound(id) }
            var route: Int32?
            if let routeID {
                guard let index = feed.timetable.routesByID[routeID] else {
                    throw APIError.validation(field: "route_id", "no route of this stop's feed has this id")
                }
                route = index
            }
            let now = clock.now()
            let time = Int64((at ?? now).timeIntervalSince1970)
            let rows = DepartureBoard(timetable: feed.timetable, overlay: feed.overlay)
                .departures(.init(stop: stop, at: time, limit: limit, route: route, directionID: direction.map(Int8.init)))
            let (freshness, meta) = realtimeStatus(feed, now: now)
            return try respond(
                [
                    "stop": TransitJSON.stopSummary(feed, stop), "departures": .array(rows.map { TransitJSON.departure(feed, $0) }),
                    "last_updated": freshness.lastUpdated, "stale": .bool(freshness.stale),
                ], headers: [.cacheControl: "no-cache"], meta: meta, context)
        }
    }

    /// `last_updated` and `stale` for a feed's answer, and the transit API's stale note for `meta`.
    func realtimeStatus(_ feed: LoadedFeed, now: Date) -> (fields: (lastUpdated: JSONValue, stale: Bool), meta: [String: JSONValue]) {
        let nowMs = now.epochMilliseconds
        let zone = feed.timetable.zone
        let time = feed.realtime.dataTime ?? (feed.realtime.expected ? nil : (feed.version.activatedAt ?? feed.version.importedAt))
        let lastUpdated: JSONValue = time.map { .string(zone.iso8601($0 / 1000)) } ?? .null
        let stale = feed.realtime.isStale(now: nowMs, staleAfterMs: Int64(transit.config.staleAfterSeconds) * 1000)
        guard stale else { return ((lastUpdated, false), [:]) }
        let minutes = max(1, transit.config.staleAfterSeconds / 60)
        return (
            (lastUpdated, true),
            [
                "stale": true, "cached_at": lastUpdated,
                "message": .string(
                    feed.realtime.dataTime == nil
                        ? "No realtime data yet: showing the timetable." : "Showing cached data (more than \(minutes) minute\(minutes == 1 ? "" : "s") old)."),
            ]
        )
    }

    // MARK: Routes

    func addRouteRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.get("/routes") { request, context in
            var q = QueryReader(request)
            let filter = q.routeType("route_type")
            let limit = q.integer("limit", 1...500, default: 100)
            let offset = q.integer("offset", 0...Int(Int32.max), default: 0)
            try q.validate()
            let snapshot = try loaded()
            let tag = etag(snapshot, request)
            if ConditionalGet.matches(request, tag) { return ConditionalGet.notModified(tag, cacheControl: Self.cacheable) }
            var all: [(LoadedFeed, Int32)] = []
            for feed in snapshot.feeds {
                let routes = feed.timetable.feed.routes
                let indices = routes.indices.filter { filter?.matches(routes[$0].type) ?? true }
                    .sorted {
                        (routes[$0].sortOrder ?? Int.max, routes[$0].shortName ?? routes[$0].longName ?? "", routes[$0].id) < (
                            routes[$1].sortOrder ?? Int.max, routes[$1].shortName ?? routes[$1].longName ?? "", routes[$1].id
                        )
                    }
                all += indices.map { (feed, Int32($0)) }
            }
            let page = all.dropFirst(offset).prefix(limit).map { TransitJSON.route($0.0, $0.1) }
            return try respond(
                ["routes": .array(Array(page)), "total": .number(Double(all.count)), "limit": .number(Double(limit)), "offset": .number(Double(offset))],
                headers: [.eTag: tag, .cacheControl: Self.cacheable], context)
        }
        api.get("/routes/{id}/trips") { request, context in
            let id = try Self.pathID(context)
            var q = QueryReader(request)
            let direction = q.integer("direction_id", 0...1)
            try q.validate()
            let snapshot = try loaded()
            guard let (feed, route) = snapshot.route(id) else { throw TransitError.routeNotFound(id) }
            let now = clock.now()
            let runs = RouteActivity(timetable: feed.timetable, overlay: feed.overlay).runs(
                route: route, at: Int64(now.timeIntervalSince1970), directionID: direction.map(Int8.init))
            let (freshness, meta) = realtimeStatus(feed, now: now)
            return try respond(
                [
                    "route": TransitJSON.route(feed, route), "active_trips": .array(runs.map { TransitJSON.run(feed, $0) }),
                    "last_updated": freshness.lastUpdated, "stale": .bool(freshness.stale),
                ], headers: [.cacheControl: "no-cache"], meta: meta, context)
        }
    }

    // MARK: Alerts

    func addAlertRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.get("/alerts") { request, context in
            var q = QueryReader(request)
            let routeID = q.identifier("route_id")
            let stopID = q.identifier("stop_id")
            var severity: AlertSeverity?
            if let text = q.raw("severity") {
                severity = AlertSeverity(rawValue: text)
                if severity == nil { q.validator.fail("severity", "must be info, warning or critical") }
            }
            try q.validate()
            let (alerts, lastUpdated) = try await transit.alerts.current(.init(routeID: routeID, stopID: stopID, severity: severity))
            let zone = transit.snapshot.feeds.first?.timetable.zone
            let updated: JSONValue = lastUpdated.map { .string(zone?.iso8601($0 / 1000) ?? Timestamp.string(epochMilliseconds: $0)) } ?? .null
            return try respond(
                ["alerts": .array(alerts), "count": .number(Double(alerts.count)), "last_updated": updated], headers: [.cacheControl: "no-cache"], context)
        }
        api.post("/alerts") { request, context in
            let identity = try context.require(.service, .operator)
            let input = try PostedAlertInput.parse(try await request.jsonObject(context: context))
            let (record, created) = try await transit.alerts.post(input, by: identity.userID)
            return try respond(TransitJSON.postedAlert(transit.snapshot.feeds.first?.timetable.zone, record), status: created ? .created : .ok, context)
        }
    }

    // MARK: The feed itself

    func addFeedRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.get("/gtfs/version") { request, context in
            let snapshot = try loaded()
            let tag = etag(snapshot, request)
            if ConditionalGet.matches(request, tag) { return ConditionalGet.notModified(tag, cacheControl: "no-cache") }
            let feeds = snapshot.feeds.map { Self.versionJSON($0, publicURL: publicURL) }
            guard case .object(var first) = feeds[0] else { return try respond(.null, context) }
            first["feeds"] = .array(feeds)
            return try respond(.object(first), headers: [.eTag: tag, .cacheControl: "no-cache"], context)
        }
        api.get("/gtfs/feeds/{name}/offline.db") { request, context in
            let name = try Self.pathID(context, "name")
            guard let feed = transit.snapshot.feed(name), let sha256 = feed.version.offlineSHA256 else { throw TransitError.feedNotFound(name) }
            return try await Self.download(
                request, feed.version, sha256: sha256, type: "application/vnd.sqlite3", file: Self.fileName(name, feed.version) + ".db"
            ) {
                try await transit.feeds.offlineFile(feed.version)
            }
        }
        api.get("/gtfs/feeds/{name}/download") { request, context in
            let name = try Self.pathID(context, "name")
            guard let feed = transit.snapshot.feed(name) else { throw TransitError.feedNotFound(name) }
            return try await Self.download(
                request, feed.version, sha256: feed.version.sha256, type: "application/zip", file: Self.fileName(name, feed.version) + ".zip"
            ) {
                try await transit.feeds.feedFile(feed.version)
            }
        }
    }

    /// A version's file (its zip, its offline database): a conditional GET is answered from
    /// the served version's checksum before `read` goes to the database for the bytes.
    static func download(
        _ request: Request, _ version: FeedVersionRecord, sha256: String, type: String, file: String, read: () async throws -> Data?
    ) async throws -> Response {
        let tag = "\"\(sha256)\""
        if ConditionalGet.matches(request, tag) { return ConditionalGet.notModified(tag, cacheControl: "public, max-age=300") }
        guard let bytes = try await read() else { throw TransitError.feedNotFound(version.feedName) }
        return Response(
            status: .ok,
            headers: [
                .contentType: type, .eTag: tag, .cacheControl: "public, max-age=300", .contentDisposition: "attachment; filename=\"\(file)\"",
                HTTPField.Name("X-Checksum-SHA256")!: sha256,
            ],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// `{feed}-{version}` with only safe characters, for a download's file name.
    static func fileName(_ name: String, _ version: FeedVersionRecord) -> String {
        "\(name)-\(version.version.filter { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." })"
    }

    /// `/gtfs/version`'s shape for one feed: the design's `download_url`, `file_size_bytes`
    /// and `checksum_sha256` name the offline database (nil for a version imported without
    /// one); the GTFS zip is `gtfs_zip_url` with its own size and checksum.
    static func versionJSON(_ feed: LoadedFeed, publicURL: String?) -> JSONValue {
        let zone = feed.timetable.zone
        let days = feed.timetable.calendar.days
        let base = publicURL ?? ""
        let hasOffline = feed.version.offlineSHA256 != nil
        return [
            "feed": .string(feed.name), "version": .string(feed.version.version), "version_id": .string(feed.version.id),
            "generated_at": .string(zone.iso8601(feed.version.importedAt / 1000)),
            "download_url": hasOffline ? .string("\(base)/api/v1/gtfs/feeds/\(feed.name)/offline.db") : .null,
            "file_size_bytes": feed.version.offlineSizeBytes.map { .number(Double($0)) } ?? .null,
            "checksum_sha256": feed.version.offlineSHA256.map(JSONValue.string) ?? .null,
            "schema_version": hasOffline ? .number(Double(OfflineDatabase.schemaVersion)) : .null,
            "gtfs_zip_url": .string("\(base)/api/v1/gtfs/feeds/\(feed.name)/download"), "gtfs_zip_size_bytes": .number(Double(feed.version.sizeBytes)),
            "gtfs_zip_sha256": .string(feed.version.sha256), "timezone": .string(zone.identifier),
            "service_start_date": days.map { .string(ServiceDate.iso($0.lowerBound)) } ?? .null,
            "service_end_date": days.map { .string(ServiceDate.iso($0.upperBound)) } ?? .null,
        ]
    }
}
