/// A driver's profile, approval, availability and last written location (one row of `drivers`).
public struct DriverRecord: Sendable, Equatable, Codable {
    public var userID: String
    public var name: String
    public var phone: String?
    public var truckType: String
    public var vehicleDescription: String?
    public var licensePlate: String?
    /// An https URL (`PUT /drivers/me`'s `photo_url`).
    public var photoURL: String?
    public var approval: DriverApproval
    public var approvalReason: String?
    public var approvalChangedAt: Int64?
    public var approvalChangedBy: String?
    public var ratingTotal: Int64
    public var ratingCount: Int64
    public var completedJobs: Int64
    /// 0 or 1 (one schema for both engines).
    public var online: Int
    public var onlineChangedAt: Int64?
    public var latitude: Double?
    public var longitude: Double?
    public var accuracyM: Double?
    public var heading: Double?
    public var speedMps: Double?
    public var locationSeq: Int64?
    public var locationAt: Int64?
    public var locationClientAt: Int64?
    public var locationSession: String?
    public var createdAt: Int64
    public var updatedAt: Int64

    public var isOnline: Bool { online != 0 }
    /// The average rating (1–5) with one decimal, nil before the first rating.
    public var averageRating: Double? { Self.averageRating(total: ratingTotal, count: ratingCount) }

    /// A 1–5 average with one decimal from a running total, nil before the first rating
    /// (riders' averages use it too).
    public static func averageRating(total: Int64, count: Int64) -> Double? {
        count > 0 ? (Double(total) / Double(count) * 10).rounded() / 10 : nil
    }

    enum CodingKeys: String, CodingKey {
        case name, phone, online, latitude, longitude, heading
        case userID = "user_id"
        case truckType = "truck_type"
        case vehicleDescription = "vehicle_description"
        case licensePlate = "license_plate"
        case photoURL = "photo_url"
        case approval = "approval_status"
        case approvalReason = "approval_reason"
        case approvalChangedAt = "approval_changed_at"
        case approvalChangedBy = "approval_changed_by"
        case ratingTotal = "rating_total"
        case ratingCount = "rating_count"
        case completedJobs = "completed_jobs"
        case onlineChangedAt = "online_changed_at"
        case accuracyM = "accuracy_m"
        case speedMps = "speed_mps"
        case locationSeq = "location_seq"
        case locationAt = "location_at"
        case locationClientAt = "location_client_at"
        case locationSession = "location_session"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}
