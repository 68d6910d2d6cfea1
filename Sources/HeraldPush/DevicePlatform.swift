/// The platform a device registered from (`push_devices.platform`); the payload builders
/// shape a push for it.
public enum DevicePlatform: String, Sendable, Codable, CaseIterable {
    case ios
    case android
    case web
}
