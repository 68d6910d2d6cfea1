import HeraldGTFS

/// A feed Herald serves: one row of `transit_feeds`.
public struct FeedStateRecord: Sendable, Equatable, Codable {
    public var name: String
    /// The version that serves (`transit_feed_versions.id`), nil before the first import.
    public var activeVersion: String?
    public var sourceURL: String?
    /// The static feed's validators for a conditional GET.
    public var etag: String?
    public var lastModified: String?
    public var nextCheckAt: Int64
    public var checkedAt: Int64?
    public var lastError: String?
    public var importLeaseUntil: Int64?
    public var importID: String?
    public var updatedAt: Int64

    enum CodingKeys: String, CodingKey {
        case name, etag
        case activeVersion = "active_version"
        case sourceURL = "source_url"
        case lastModified = "last_modified"
        case nextCheckAt = "next_check_at"
        case checkedAt = "checked_at"
        case lastError = "last_error"
        case importLeaseUntil = "import_lease_until"
        case importID = "import_id"
        case updatedAt = "updated_at"
    }
}

public enum FeedVersionStatus: String, Sendable, Codable, Equatable {
    /// Rows are being written; nothing reads it.
    case loading
    /// The version serves (or served and may again).
    case ready
    /// Replaced by a newer version; its rows are deleted.
    case retired
}

/// One loaded version of a feed: one row of `transit_feed_versions`.
public struct FeedVersionRecord: Sendable, Equatable, Codable {
    public var id: String
    public var feedName: String
    /// feed_info.feed_version when the feed has one, else the import date and the hash.
    public var version: String
    public var sha256: String
    public var sizeBytes: Int64
    public var status: FeedVersionStatus
    public var source: String?
    public var rowCount: Int64
    public var stopTimeCount: Int64
    /// The import's findings (warnings), as JSON.
    public var report: String?
    public var importedAt: Int64
    public var activatedAt: Int64?
    /// The offline database's size and sha256 (nil for a version imported before Herald
    /// made one, or with `transit.offline_days: 0`).
    public var offlineSizeBytes: Int64? = nil
    public var offlineSHA256: String? = nil

    enum CodingKeys: String, CodingKey {
        case id, version, sha256, status, source, report
        case offlineSizeBytes = "offline_size_bytes"
        case offlineSHA256 = "offline_sha256"
        case feedName = "feed_name"
        case sizeBytes = "size_bytes"
        case rowCount = "row_count"
        case stopTimeCount = "stop_time_count"
        case importedAt = "imported_at"
        case activatedAt = "activated_at"
    }
}

public enum ImportStatus: String, Sendable, Codable, Equatable {
    case running
    /// A new version serves.
    case succeeded
    /// The feed was the one already serving (same bytes); nothing changed.
    case unchanged
    /// Refused (the report says why) or it could not be fetched; the old version serves.
    case failed
}

/// One import attempt: one row of `transit_imports`.
public struct ImportRecord: Sendable, Equatable, Codable {
    public var id: String
    public var feedName: String
    public var status: ImportStatus
    public var source: String
    public var versionID: String?
    /// The findings, as JSON (`FeedReportJSON`).
    public var report: String?
    /// Why it failed, when the feed could not be read at all.
    public var error: String?
    public var requestedBy: String?
    public var createdAt: Int64
    public var finishedAt: Int64?

    enum CodingKeys: String, CodingKey {
        case id, status, source, report, error
        case feedName = "feed_name"
        case versionID = "version_id"
        case requestedBy = "requested_by"
        case createdAt = "created_at"
        case finishedAt = "finished_at"
    }
}
