import Testing

@testable import HeraldPush

/// The typed reasons read providers' names and write back the exact text stored with a
/// delivery (which operators search and the statistics count), so typing them changed no row.
struct PushFailureTests {
    @Test func everyReasonInApplesTableReadsBackAsItself() {
        #expect(APNsFailure.listed.count == 32)
        for reason in APNsFailure.listed {
            #expect(APNsFailure(status: 400, reason: reason.description) == reason)
        }
        #expect(APNsFailure(status: 400, reason: "SomethingNew") == .unlisted(status: 400, reason: "SomethingNew"))
        #expect(APNsFailure(status: 502, reason: nil).description == "HTTP502")
        #expect(APNsFailure.badCollapseID.description == "BadCollapseId")
        #expect(APNsFailure.goneBeforeReRegistration(.unregistered).description == "Unregistered (token re-registered since)")
    }

    @Test func onlyTheDocumentedReasonsMeanAGoneTokenOrARetry() {
        let gone = APNsFailure.listed.filter(\.meansTokenGone).map(\.description)
        #expect(Set(gone) == ["BadDeviceToken", "DeviceTokenNotForTopic", "Unregistered", "ExpiredToken"])
        let transient = APNsFailure.listed.filter(\.isTransient).map(\.description)
        #expect(
            Set(transient) == [
                "TooManyRequests", "TooManyProviderTokenUpdates", "IdleTimeout", "InternalServerError", "ServiceUnavailable", "Shutdown",
            ])
        #expect(!APNsFailure.unlisted(status: 400, reason: "Unregistered ").meansTokenGone)
    }

    @Test func storedTextIsWhatItWasAsAString() {
        let stored: [(PushFailure, String)] = [
            (.fcm(FCMFailure(code: "UNREGISTERED")), "UNREGISTERED"),
            (.fcm(FCMFailure(code: "PERMISSION_DENIED")), "PERMISSION_DENIED"),
            (.fcm(.http(502)), "HTTP_502"),
            (.fcm(.authConfiguration), "AUTH_CONFIGURATION"),
            (.webPush(.serverError(503)), "ServerError(503)"),
            (.webPush(.refused(status: 401, detail: "BadJwtToken")), "Unauthorized(401): BadJwtToken"),
            (.webPush(.refused(status: 302, detail: nil)), "UnexpectedStatus(302)"),
            (.webPush(.invalidSubscriptionKeys), "InvalidSubscriptionKeys: p256dh and auth must be base64url"),
            (.transport(.connectionError), "connection_error"),
            (.transport(.sendError), "send_error"),
        ]
        for (failure, text) in stored { #expect(failure.description == text) }
        #expect(FCMFailure(code: "INTERNAL") == .internal)
    }
}
