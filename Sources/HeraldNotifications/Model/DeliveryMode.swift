import HeraldCore
import HeraldPush

/// `push`: reach the user even when offline (socket first when connected — the notification
/// design's "opportunistic fallforward"). `in_app`: never interrupt; socket when online, inbox otherwise.
public enum DeliveryMode: String, ConfigChoice {
    case push
    case inApp = "in_app"
}
