import HeraldCore
import HeraldPush
import HeraldStorage

/// Broadcast channels (iOS 18): one per app, environment and subject of a kind whose content
/// is the same for all its followers (a stop's departures). The app asks for the channel,
/// starts its activity with `pushType: .channel(id)`, and every change reaches all its
/// subscribers in one push, however many there are.
extension LiveActivityService {
    static let channelFields: Set<String> = ["kind", "subject_id", "app_id", "environment"]

    /// What a channel request answers: the channel row and the subject as it is now (the
    /// content and attributes the app starts its activity with).
    public struct Channel: Sendable {
        public var record: LiveActivityRecord
        public var snapshot: LiveActivitySnapshot
        public var created: Bool
    }

    /// `POST /live-activities/channels`: the channel of a subject, made at APNs the first time
    /// one is asked for (201), the same one afterwards (200). Each request keeps the channel in
    /// use for `channel_idle_seconds` more.
    public func channel(userID: String, body: [String: JSONValue]) async throws -> Channel {
        var r = FieldReader(body)
        r.refuseUnknown(Self.channelFields)
        let kind = readKind(&r)
        let subjectID = r.string("subject_id", maxLength: 128, required: true)
        let app = r.string("app_id", maxLength: 64) ?? PushApps.defaultID
        let environmentText = r.string("environment", maxLength: 16)
        if !apps.contains(app) { r.fail("app_id", "must be one of this server's apps: \(apps.sorted().joined(separator: ", "))") }
        let requested = environmentText.flatMap(APNsEnvironment.init(rawValue:))
        if environmentText != nil && requested == nil { r.fail("environment", "must be production or sandbox") }
        if let kind, !kind.broadcasts { r.fail("kind", "\(kind.rawValue) activities are one person's: register their token instead") }
        try r.validate()
        guard let kind, let subjectID else { throw APIError.validation(field: "subject_id", "is required") }
        guard let source = sources.withLock({ $0[kind] }) else {
            throw APIError.validation(field: "kind", "\(kind.rawValue) activities are not served by this server")
        }
        guard let snapshot = try await source.snapshot(subjectID: subjectID, userID: userID) else {
            throw APIError.notFound("No \(kind.rawValue) \(subjectID.debugDescription) that you may follow.")
        }
        let environment = requested ?? senders?.environment(app: app) ?? .production
        guard let broadcaster = senders?.liveActivityBroadcaster(app: app, environment: environment) else {
            throw APIError(status: 503, code: .serviceUnavailable, message: "Broadcast channels are not available on this server.")
        }
        let now = self.now
        let store = self.store
        // The channel in use and how many the app has, in one round trip.
        let (found, count) = try await database.withConnection { db in
            let existing = try await store.activeChannel(db, appID: app, environment: environment, kind: kind, subjectID: subjectID)
            return (existing, existing == nil ? try await store.activeChannelCount(db, appID: app, environment: environment) : 0)
        }
        if let existing = found {
            // One write a minute at most per channel, however many apps ask.
            if now - existing.tokenUpdatedAt > 60_000 {
                try await database.withConnection { db in try await store.touchChannel(db, id: existing.id, now: now) }
            }
            return Channel(record: existing, snapshot: snapshot, created: false)
        }
        let maxChannels = config.maxChannels
        guard count < maxChannels else {
            throw APIError(
                status: 503, code: .liveActivityChannelLimit,
                message: "This app has \(maxChannels) broadcast channels in use; register the activity's own push token instead.",
                details: ["limit": .number(Double(maxChannels))])
        }
        let channelID: String
        switch await broadcaster.createChannel(storage: config.channelStorage) {
        case .success(let id): channelID = id
        case .failure(let failure):
            logger.error("creating a broadcast channel failed", metadata: ["app": "\(app)", "reason": "\(failure.reason)"])
            throw APIError(status: 503, code: .serviceUnavailable, message: "APNs did not make the broadcast channel; try again later.")
        }
        var made = LiveActivityRecord(
            id: Identifier.make("lac"), userID: "", appID: app, kind: kind, subjectID: subjectID, activityID: nil, mode: .channel, token: channelID,
            environment: environment, content: snapshot.content, now: now)
        made.attributes = LiveActivityRecord.text(.object(snapshot.attributes))
        let record = made
        let inserted = try await database.withConnection { db in try await store.insert(db, record, skipConflict: true) }
        if inserted { return Channel(record: record, snapshot: snapshot, created: true) }
        // Another node made the subject's channel meanwhile: its channel serves, ours goes.
        if case .failure(let failure) = await broadcaster.deleteChannel(channelID) {
            logger.warning("deleting a surplus broadcast channel failed", metadata: ["app": "\(app)", "reason": "\(failure.reason)"])
        }
        guard
            let winner = try await database.withConnection({ db in
                try await store.activeChannel(db, appID: app, environment: environment, kind: kind, subjectID: subjectID)
            })
        else { throw APIError(status: 503, code: .serviceUnavailable, message: "The broadcast channel changed meanwhile; try again.") }
        return Channel(record: winner, snapshot: snapshot, created: false)
    }

    /// The subjects of `kind` that activities or channels follow now, for the module that
    /// computes their content.
    public func followedSubjects(kind: LiveActivityKind, limit: Int = 100_000) async throws -> [String] {
        try await database.withConnection { db in try await self.store.followedSubjects(db, kind: kind, limit: limit) }
    }

    public static func json(_ channel: Channel, attributesType: String, storage: LiveActivityChannelStorage) -> JSONValue {
        let r = channel.record
        return .object([
            "channel_id": .string(r.token), "kind": .string(r.kind.rawValue), "subject_id": .string(r.subjectID), "app_id": .string(r.appID),
            "environment": r.environment.map { .string($0.rawValue) } ?? .null, "attributes_type": .string(attributesType),
            "attributes": .object(channel.snapshot.attributes), "content_state": .object(channel.snapshot.content),
            "message_storage_policy": .string(storage.rawValue), "pushes_sent": .number(Double(r.sentCount)),
            "created_at": .string(Timestamp.string(epochMilliseconds: r.createdAt)),
        ])
    }
}

extension ErrorCode {
    /// An app with `notifications.live_activities.max_channels` broadcast channels in use.
    public static let liveActivityChannelLimit: ErrorCode = "LIVE_ACTIVITY_CHANNEL_LIMIT"
}
