/// The push service a device token belongs to (`push_devices.provider`, stored as the raw
/// value); the delivery worker picks its sender by it.
public enum PushProvider: String, Sendable, Codable, CaseIterable {
    case apns
    case fcm
    case webpush
}
