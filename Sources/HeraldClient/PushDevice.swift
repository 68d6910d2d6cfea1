import Foundation

/// A device registered for push (`POST /api/v1/push/register`).
public struct PushDevice: Sendable, Equatable, Decodable {
    public let id: String
    public let token: String
    public let provider: String
    public let platform: String
    public let deviceId: String?
    public let appVersion: String?
    public let active: Bool

    enum CodingKeys: String, CodingKey {
        case id, token, provider, platform, active
        case deviceId = "device_id"
        case appVersion = "app_version"
    }
}
