import HeraldRealtime

extension AckToken.Kind {
    /// A notification's socket delivery waiting for the app's acknowledgement; its id is the
    /// delivery's (`dlv_…`), and `NotificationService.acknowledged(deliveryID:)` records it.
    public static let delivery = AckToken.Kind(rawValue: "delivery")
}
