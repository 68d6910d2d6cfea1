import Foundation
import HeraldCore
import HeraldPush
import HeraldStorage
import Logging
import SQLKit
import Synchronization

/// Live Activities: the apps' registrations, and the changes the domain modules publish.
///
/// Why the content lives in the database row and not in a queue of pushes: every node may
/// publish a change (the one holding the driver's socket, the one that took a transition),
/// each change commits with the state it reports (an update never describes a transition
/// that rolled back), and the worker of any node sends the newest content once
/// (`LiveActivityPolicy`).
public final class LiveActivityService: Sendable {
    let database: any Database
    public let config: LiveActivitiesConfig
    public let policy: LiveActivityPolicy
    let apps: Set<String>
    /// For broadcast channels (made and deleted through the app's APNs sender); nil: none.
    let senders: PushSenders?
    let clock: any HeraldClock
    let logger: Logger
    let store = LiveActivityStore()
    /// Cut short the worker's wait after a change this node made.
    public let wakeSignal = WakeSignal()
    let sources = Mutex<[LiveActivityKind: any LiveActivitySource]>([:])
    /// Standalone changes (an ETA from a location sample) arriving together commit together.
    ///
    /// Why: one transaction per change capped a node near 1,400 changes a second on SQLite
    /// (the commit, not the statements, was the cost); batched, the same statements share a
    /// commit (`Benchmarks/push-run.sh`, `live-activities`).
    private let publisher: GroupCommit<LiveActivityChange, Int>

    /// Push-to-start tokens a user keeps per kind (one per device and app, and some spare).
    static let startTokensPerKind = 16

    public init(
        database: any Database, config: LiveActivitiesConfig, apps: Set<String> = [PushApps.defaultID], senders: PushSenders? = nil,
        clock: any HeraldClock, logger: Logger
    ) {
        self.database = database
        self.senders = senders
        self.config = config
        self.policy = LiveActivityPolicy(config)
        self.apps = apps
        self.clock = clock
        self.logger = logger
        let store = self.store
        let policy = self.policy
        publisher = GroupCommit(maxBatch: 256) { changes in
            let now = clock.now().epochMilliseconds
            // In subject order: two nodes' batches lock the rows they share in the same order.
            let order = changes.indices.sorted { (changes[$0].kind.rawValue, changes[$0].subjectID) < (changes[$1].kind.rawValue, changes[$1].subjectID) }
            return try await database.transaction { db in
                var counts = [Int](repeating: 0, count: changes.count)
                for index in order {
                    counts[index] = try await Self.apply(changes[index], db: db, engine: database.engine, store: store, policy: policy, now: now)
                }
                return counts
            }
        }
    }

    var now: Int64 { clock.now().epochMilliseconds }

    /// Called by the module that owns `kind` in its composition root.
    public func setSource(_ source: any LiveActivitySource, for kind: LiveActivityKind) {
        sources.withLock { $0[kind] = source }
    }

    public func wake() { wakeSignal.signal() }

    // MARK: Registrations

    static let activityFields: Set<String> = ["activity_id", "kind", "subject_id", "push_token", "app_id", "environment"]

    /// `POST /live-activities`: an activity the app runs (started by itself or by Herald's
    /// start push) and its update token. Registering the same `activity_id` again replaces
    /// the token (ActivityKit rotates them). The subject must be one the user may see (404
    /// otherwise); one already over is ended at once.
    public func register(userID: String, body: [String: JSONValue]) async throws -> (record: LiveActivityRecord, created: Bool) {
        var r = FieldReader(body)
        r.refuseUnknown(Self.activityFields)
        let activityID = r.string("activity_id", maxLength: 128, required: true)
        let kind = readKind(&r)
        let subjectID = r.string("subject_id", maxLength: 128, required: true)
        let (app, token, environment) = readToken(&r)
        try r.validate()
        guard let activityID, let kind, let subjectID, let token else { throw APIError.validation(field: "push_token", "is required") }
        let source = sources.withLock { $0[kind] }
        guard let source else {
            throw APIError.validation(field: "kind", "\(kind.rawValue) activities are not served by this server yet")
        }
        guard let snapshot = try await source.snapshot(subjectID: subjectID, userID: userID) else {
            throw APIError.notFound("No \(kind.rawValue) \(subjectID.debugDescription) that you may follow.")
        }
        let now = self.now
        let maxPerUser = config.maxPerUser
        let policy = self.policy
        let result = try await database.transaction { db -> (LiveActivityRecord, Bool) in
            if let existing = try await self.store.find(db, userID: userID, activityID: activityID) {
                guard existing.kind == kind, existing.subjectID == subjectID else {
                    throw APIError(
                        status: 409, code: .conflict, message: "This activity_id is registered for another subject.",
                        details: ["kind": .string(existing.kind.rawValue), "subject_id": .string(existing.subjectID)])
                }
                guard let updated = try await self.store.updateToken(db, id: existing.id, token: token, appID: app, environment: environment, now: now)
                else { throw StoreError.noRowReturned }
                return (updated, false)
            }
            guard try await self.store.activeCount(db, userID: userID) < maxPerUser else {
                throw APIError(
                    status: 409, code: .liveActivityLimit, message: "You have \(maxPerUser) Live Activities running; end one first.",
                    details: ["limit": .number(Double(maxPerUser))])
            }
            var record = LiveActivityRecord(
                id: Identifier.make("la"), userID: userID, appID: app, kind: kind, subjectID: subjectID, activityID: activityID, mode: .update,
                token: token, environment: environment, content: snapshot.content, now: now)
            if snapshot.ended, let ended = policy.apply(LiveActivityChange(kind: kind, subjectID: subjectID, patch: [:], ends: true), to: record, now: now) {
                record = ended
            }
            try await self.store.insert(db, record)
            return (record, true)
        }
        if result.0.dueAt != nil { wake() }
        return result
    }

    /// `GET /live-activities`: the caller's activities, newest first.
    public func activities(userID: String) async throws -> [LiveActivityRecord] {
        try await database.withConnection { db in try await self.store.list(db, userID: userID, limit: 200) }
    }

    /// `DELETE /live-activities/{activity_id}`: the app ended it; nil when it has no such activity.
    public func cancel(userID: String, activityID: String) async throws -> LiveActivityRecord? {
        let now = self.now
        return try await database.withConnection { db in try await self.store.cancel(db, userID: userID, activityID: activityID, now: now) }
    }

    static let startTokenFields: Set<String> = ["kind", "push_token", "app_id", "environment"]

    /// `PUT /live-activities/start-tokens`: a push-to-start token (iOS 17.2+), with which
    /// Herald starts the kind's activities on the device.
    public func registerStartToken(userID: String, body: [String: JSONValue]) async throws -> (record: LiveActivityStartTokenRecord, created: Bool) {
        var r = FieldReader(body)
        r.refuseUnknown(Self.startTokenFields)
        let kind = readKind(&r)
        let (app, token, environment) = readToken(&r)
        try r.validate()
        guard let kind, let token else { throw APIError.validation(field: "push_token", "is required") }
        let record = LiveActivityStartTokenRecord(appID: app, token: token, userID: userID, kind: kind, environment: environment, now: now)
        return try await database.transaction { db in
            let saved = try await self.store.saveStartToken(db, record)
            try await self.store.trimStartTokens(db, userID: userID, kind: kind, keep: Self.startTokensPerKind)
            return saved
        }
    }

    public func startTokens(userID: String) async throws -> [LiveActivityStartTokenRecord] {
        try await database.withConnection { db in try await self.store.startTokens(db, userID: userID) }
    }

    /// `DELETE /live-activities/start-tokens/{kind}`: the user turned the kind's activities off.
    public func removeStartTokens(userID: String, kind text: String) async throws -> Int {
        guard let kind = LiveActivityKind(rawValue: text) else {
            throw APIError.validation(field: "kind", "must be one of \(LiveActivityKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return try await database.withConnection { db in try await self.store.deleteStartTokens(db, userID: userID, kind: kind) }
    }

    func readKind(_ r: inout FieldReader) -> LiveActivityKind? {
        let text = r.string("kind", maxLength: 32, required: true)
        let kind = text.flatMap(LiveActivityKind.init(rawValue:))
        if text != nil && kind == nil { r.fail("kind", "must be one of \(LiveActivityKind.allCases.map(\.rawValue).joined(separator: ", "))") }
        return kind
    }

    /// The token fields every registration shares: an ActivityKit token is an APNs token
    /// (hex), of the app `app_id`, valid in `environment`.
    func readToken(_ r: inout FieldReader) -> (app: String, token: String?, environment: APNsEnvironment?) {
        let token = r.string("push_token", maxLength: 200, required: true)
        let app = r.string("app_id", maxLength: 64) ?? PushApps.defaultID
        let environmentText = r.string("environment", maxLength: 16)
        if !apps.contains(app) { r.fail("app_id", "must be one of this server's apps: \(apps.sorted().joined(separator: ", "))") }
        let environment = environmentText.flatMap(APNsEnvironment.init(rawValue:))
        if environmentText != nil && environment == nil { r.fail("environment", "must be production or sandbox") }
        if let token {
            for problem in DeviceTokenRules.problems(token: token, provider: .apns) { r.fail("push_token", problem) }
        }
        return (app, token.map { DeviceTokenRules.normalized(token: $0, provider: .apns) }, environment)
    }

    // MARK: Changes from the domain

    /// Applies `change` to every activity following its subject, in the caller's transaction
    /// (the owning module's unit of work); call `wake()` after the commit. Returns how many
    /// activities it changed.
    @discardableResult
    public func publish(_ change: LiveActivityChange, in db: any SQLDatabase) async throws -> Int {
        guard config.enabled else { return 0 }
        return try await Self.apply(change, db: db, engine: database.engine, store: store, policy: policy, now: now)
    }

    static func apply(
        _ change: LiveActivityChange, db: any SQLDatabase, engine: DatabaseEngine, store: LiveActivityStore, policy: LiveActivityPolicy, now: Int64
    ) async throws -> Int {
        var changed = 0
        for row in try await store.following(db, engine: engine, kind: change.kind, subjectID: change.subjectID) {
            guard let next = policy.apply(change, to: row, now: now) else { continue }
            try await store.saveChange(db, next)
            changed += 1
        }
        return changed
    }

    /// `publish` in a transaction of its own, shared with the changes that arrive meanwhile
    /// (a change that follows no other write, such as an ETA from a location sample);
    /// failures are logged, never thrown at the caller.
    public func publish(_ change: LiveActivityChange) async {
        guard config.enabled else { return }
        do {
            if try await publisher.submit(change) > 0 { wake() }
        } catch {
            logger.error(
                "updating live activities failed",
                metadata: ["kind": "\(change.kind.rawValue)", "subject_id": "\(change.subjectID)", "error": "\(String(reflecting: error))"])
        }
    }

    /// Writes a start push for each push-to-start token the users have for the kind, in the
    /// caller's transaction; call `wake()` after the commit.
    @discardableResult
    public func start(_ start: LiveActivityStart, in db: any SQLDatabase) async throws -> Int {
        guard config.enabled else { return 0 }
        let now = self.now
        let tokens = try await store.startTokens(db, userIDs: start.userIDs, kind: start.kind)
        for token in tokens where apps.contains(token.appID) {
            var record = LiveActivityRecord(
                id: Identifier.make("la"), userID: token.userID, appID: token.appID, kind: start.kind, subjectID: start.subjectID, activityID: nil,
                mode: .start, token: token.token, environment: token.environment, content: start.content, attributes: start.attributes, now: now)
            record.tokenUpdatedAt = token.updatedAt
            record.version = 1
            record.importantVersion = 1
            record.alert = LiveActivityRecord.text(start.alert)
            record.alertVersion = 1
            record.dueAt = now
            try await store.insert(db, record)
        }
        return tokens.count
    }

    // MARK: JSON

    public static func json(_ r: LiveActivityRecord) -> JSONValue {
        func time(_ ms: Int64?) -> JSONValue { ms.map { .string(Timestamp.string(epochMilliseconds: $0)) } ?? .null }
        return .object([
            "id": .string(r.id), "activity_id": r.activityID.map(JSONValue.string) ?? .null, "kind": .string(r.kind.rawValue),
            "subject_id": .string(r.subjectID), "app_id": .string(r.appID), "environment": r.environment.map { .string($0.rawValue) } ?? .null,
            "status": .string(r.status.rawValue), "content_state": .object(r.contentObject), "pushes_sent": .number(Double(r.sentCount)),
            "pending": .bool(r.dueAt != nil), "last_sent_at": time(r.lastSentAt), "reason": r.reason.map(JSONValue.string) ?? .null,
            "created_at": time(r.createdAt), "updated_at": time(r.updatedAt),
        ])
    }

    public static func json(_ t: LiveActivityStartTokenRecord) -> JSONValue {
        .object([
            "kind": .string(t.kind.rawValue), "app_id": .string(t.appID), "environment": t.environment.map { .string($0.rawValue) } ?? .null,
            "created_at": .string(Timestamp.string(epochMilliseconds: t.createdAt)),
            "updated_at": .string(Timestamp.string(epochMilliseconds: t.updatedAt)),
        ])
    }
}

extension ErrorCode {
    /// A user registering more Live Activities than `notifications.live_activities.max_per_user`.
    public static let liveActivityLimit: ErrorCode = "LIVE_ACTIVITY_LIMIT"
}
