import Foundation

#if canImport(ActivityKit)
    import ActivityKit
#endif

/// What a Live Activity follows (the server's `kind`).
public enum LiveActivityKind: String, Sendable, Codable, CaseIterable {
    case trip, job, departures
}

/// A ride's Live Activity, exactly as Herald's pushes describe it: use it as the app's
/// `ActivityAttributes` (on iOS it conforms), so `Activity<TripActivityAttributes>` decodes
/// Herald's `attributes` and `content-state` without a mapping. The type's name is the
/// `attributes-type` Herald sends; an app that names its own type differently sets
/// `notifications.live_activities.attributes_types.trip` on the server.
///
/// Why snake_case keys: they are the server's JSON (the rest of the API's), and ActivityKit
/// decodes the payload with a plain `JSONDecoder`, so the keys are spelled out here.
public struct TripActivityAttributes: Sendable, Hashable, Codable {
    public var tripID: String
    public var pickupAddress: String?
    public var dropoffAddress: String?

    public init(tripID: String, pickupAddress: String? = nil, dropoffAddress: String? = nil) {
        self.tripID = tripID
        self.pickupAddress = pickupAddress
        self.dropoffAddress = dropoffAddress
    }

    enum CodingKeys: String, CodingKey {
        case tripID = "trip_id"
        case pickupAddress = "pickup_address"
        case dropoffAddress = "dropoff_address"
    }

    /// What changes during the ride.
    public struct ContentState: Sendable, Hashable, Codable {
        public var tripID: String
        /// `ACCEPTED`, `ARRIVED`, `IN_PROGRESS`, `COMPLETED` or `CANCELLED`.
        public var state: String
        public var driverName: String
        /// "Silver Toyota Camry".
        public var vehicle: String?
        public var licensePlate: String?
        /// Whole minutes (rounded up), nil until the driver's position gives one.
        public var etaMinutes: Int?
        /// `pickup` or `dropoff`: where the ETA is to.
        public var etaKind: String?

        public init(
            tripID: String, state: String, driverName: String, vehicle: String? = nil, licensePlate: String? = nil, etaMinutes: Int? = nil,
            etaKind: String? = nil
        ) {
            self.tripID = tripID
            self.state = state
            self.driverName = driverName
            self.vehicle = vehicle
            self.licensePlate = licensePlate
            self.etaMinutes = etaMinutes
            self.etaKind = etaKind
        }

        enum CodingKeys: String, CodingKey {
            case state, vehicle
            case tripID = "trip_id"
            case driverName = "driver_name"
            case licensePlate = "license_plate"
            case etaMinutes = "eta_minutes"
            case etaKind = "eta_kind"
        }

        /// Whether the ride is over (the activity has ended).
        public var isFinal: Bool { state == "COMPLETED" || state == "CANCELLED" }
    }
}

/// A dispatch job's Live Activity (the truck on its way), as Herald's pushes describe it.
public struct JobActivityAttributes: Sendable, Hashable, Codable {
    public var jobID: String
    public var address: String

    public init(jobID: String, address: String) {
        self.jobID = jobID
        self.address = address
    }

    enum CodingKeys: String, CodingKey {
        case address
        case jobID = "job_id"
    }

    public struct ContentState: Sendable, Hashable, Codable {
        public var jobID: String
        /// `pending`, `accepted`, `en_route`, `arrived`, `started`, `completed`, `cancelled` or `expired`.
        public var status: String
        /// The assigned driver's first name; nil while none is.
        public var driverName: String?

        public init(jobID: String, status: String, driverName: String? = nil) {
            self.jobID = jobID
            self.status = status
            self.driverName = driverName
        }

        enum CodingKeys: String, CodingKey {
            case status
            case jobID = "job_id"
            case driverName = "driver_name"
        }

        public var isFinal: Bool { status == "completed" || status == "cancelled" || status == "expired" }
    }
}

#if canImport(ActivityKit)
    extension TripActivityAttributes: ActivityAttributes {}
    extension JobActivityAttributes: ActivityAttributes {}
#endif

/// A Live Activity as the server keeps it (`POST`/`GET /api/v1/live-activities`).
public struct LiveActivityRegistration: Sendable, Equatable, Decodable {
    public let id: String
    public let activityID: String?
    public let kind: String
    public let subjectID: String
    /// `active`, `ended`, `gone`, `failed` or `cancelled`.
    public let status: String
    public let pushesSent: Int
    /// What the activity should show now.
    public let contentState: HeraldJSON

    enum CodingKeys: String, CodingKey {
        case id, kind, status
        case activityID = "activity_id"
        case subjectID = "subject_id"
        case pushesSent = "pushes_sent"
        case contentState = "content_state"
    }
}

struct LiveActivityList: Decodable, Sendable {
    let liveActivities: [LiveActivityRegistration]
    enum CodingKeys: String, CodingKey { case liveActivities = "live_activities" }
}

struct StartTokenAnswer: Decodable, Sendable {
    let kind: String
}

struct TokenBody: Encodable, Sendable {
    let pushToken: String
    let kind: String
    let activityID: String?
    let subjectID: String?
    let appID: String?
    let environment: String?

    enum CodingKeys: String, CodingKey {
        case kind, environment
        case pushToken = "push_token"
        case activityID = "activity_id"
        case subjectID = "subject_id"
        case appID = "app_id"
    }
}

extension HeraldClient {
    /// Registers a running activity's update token (each value of `activity.pushTokenUpdates`):
    /// Herald updates and ends it from then on. `activityID` is `activity.id`; `subjectID` the
    /// trip id (job id, stop id) it follows. `appID` and `environment` as for device tokens
    /// (nil: the server's default app and that app's configured environment).
    @discardableResult
    public func registerLiveActivity(
        activityID: String, kind: LiveActivityKind, subjectID: String, pushToken: Data, appID: String? = nil, environment: String? = nil
    ) async throws -> LiveActivityRegistration {
        try await send(
            "POST", "/api/v1/live-activities",
            body: TokenBody(
                pushToken: Self.hex(pushToken), kind: kind.rawValue, activityID: activityID, subjectID: subjectID, appID: appID,
                environment: environment))
    }

    /// Registers a push-to-start token (each value of `Activity<…>.pushToStartTokenUpdates`,
    /// iOS 17.2+): Herald starts the kind's activities on this device (a ride at the match).
    public func registerPushToStartToken(_ token: Data, kind: LiveActivityKind, appID: String? = nil, environment: String? = nil) async throws {
        let _: StartTokenAnswer = try await send(
            "PUT", "/api/v1/live-activities/start-tokens",
            body: TokenBody(pushToken: Self.hex(token), kind: kind.rawValue, activityID: nil, subjectID: nil, appID: appID, environment: environment))
    }

    /// The user ended the activity in the app: Herald stops pushing to it.
    @discardableResult
    public func endLiveActivity(activityID: String) async throws -> LiveActivityRegistration {
        try await send("DELETE", "/api/v1/live-activities/\(Self.pathSegment(activityID))")
    }

    /// The signed-in user's activities, newest first.
    public func liveActivities() async throws -> [LiveActivityRegistration] {
        let list: LiveActivityList = try await send("GET", "/api/v1/live-activities")
        return list.liveActivities
    }

    static func hex(_ data: Data) -> String { data.map { String(format: "%02x", $0) }.joined() }
}
