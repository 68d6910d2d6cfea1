import Foundation

/// A stop's next departures as a Live Activity (iOS 18: on the stop's broadcast channel), as
/// Herald's pushes describe it.
public struct DeparturesActivityAttributes: Sendable, Hashable, Codable {
    public var stopID: String
    public var stopName: String?
    /// The feed the stop is from.
    public var feed: String?

    public init(stopID: String, stopName: String? = nil, feed: String? = nil) {
        self.stopID = stopID
        self.stopName = stopName
        self.feed = feed
    }

    enum CodingKeys: String, CodingKey {
        case feed
        case stopID = "stop_id"
        case stopName = "stop_name"
    }

    public struct ContentState: Sendable, Hashable, Codable {
        public var stopID: String
        /// The next departures (five at most), soonest first.
        public var departures: [Departure]

        public init(stopID: String, departures: [Departure]) {
            self.stopID = stopID
            self.departures = departures
        }

        enum CodingKeys: String, CodingKey {
            case departures
            case stopID = "stop_id"
        }
    }

    /// One departure. Times are epoch seconds (not `Date`: ActivityKit decodes the content
    /// with a default `JSONDecoder`, which reads a `Date` as seconds since 2001).
    public struct Departure: Sendable, Hashable, Codable {
        public var tripID: String
        public var routeShortName: String?
        public var headsign: String?
        public var platform: String?
        public var scheduledAt: Int64
        /// The prediction; nil without realtime data.
        public var expectedAt: Int64?
        public var delaySeconds: Int?
        public var cancelled: Bool

        public init(
            tripID: String, routeShortName: String? = nil, headsign: String? = nil, platform: String? = nil, scheduledAt: Int64,
            expectedAt: Int64? = nil, delaySeconds: Int? = nil, cancelled: Bool = false
        ) {
            self.tripID = tripID
            self.routeShortName = routeShortName
            self.headsign = headsign
            self.platform = platform
            self.scheduledAt = scheduledAt
            self.expectedAt = expectedAt
            self.delaySeconds = delaySeconds
            self.cancelled = cancelled
        }

        enum CodingKeys: String, CodingKey {
            case headsign, platform, cancelled
            case tripID = "trip_id"
            case routeShortName = "route_short_name"
            case scheduledAt = "scheduled_at"
            case expectedAt = "expected_at"
            case delaySeconds = "delay_seconds"
        }

        /// When it leaves: the prediction, else the timetable (for `Text(date, style: .relative)`).
        public var leavesAt: Date { Date(timeIntervalSince1970: TimeInterval(expectedAt ?? scheduledAt)) }
    }
}

#if canImport(ActivityKit)
    extension DeparturesActivityAttributes: ActivityAttributes {}
#endif

/// A stop's broadcast channel (`POST /api/v1/live-activities/channels`): start the activity
/// with `pushType: .channel(channelID)` and these attributes and content.
public struct DeparturesChannel: Sendable, Equatable, Decodable {
    public let channelID: String
    public let environment: String?
    public let attributes: DeparturesActivityAttributes
    public let contentState: DeparturesActivityAttributes.ContentState

    enum CodingKeys: String, CodingKey {
        case environment, attributes
        case channelID = "channel_id"
        case contentState = "content_state"
    }
}

struct ChannelBody: Encodable, Sendable {
    let kind: String
    let subjectID: String
    let appID: String?
    let environment: String?

    enum CodingKeys: String, CodingKey {
        case kind, environment
        case subjectID = "subject_id"
        case appID = "app_id"
    }
}

extension HeraldClient {
    /// The broadcast channel of a stop's departures (iOS 18), made by Herald at APNs the first
    /// time any app asks. Ask each time the app starts the activity: a channel no app asked for
    /// in twelve hours is deleted.
    public func departuresChannel(stopID: String, appID: String? = nil, environment: String? = nil) async throws -> DeparturesChannel {
        try await send(
            "POST", "/api/v1/live-activities/channels",
            body: ChannelBody(kind: LiveActivityKind.departures.rawValue, subjectID: stopID, appID: appID, environment: environment))
    }
}
