import Foundation
import HeraldCore
import HeraldNotifications
import Testing

@Suite struct DeliveryPolicyTests {
    let sydney = TimeZone(identifier: "Australia/Sydney")!
    let jobNew = NotificationType(name: "job_new", severity: .alert, delivery: .push, interruptionLevel: .timeSensitive)
    let update = NotificationType(name: "trip_update", severity: .warning, delivery: .push, interruptionLevel: .active)
    let critical = NotificationType(name: "volume_adjustment", severity: .alert, delivery: .push, critical: true)
    let optIn = NotificationType(name: "digest", severity: .info, delivery: .push, defaultEnabled: false)

    func at(_ iso: String) -> Date { Timestamp.parse(iso)! }
    var quiet: QuietHours { QuietHours(start: LocalTime(parsing: "22:00")!, end: LocalTime(parsing: "07:00")!) }

    @Test func defaultsAllowBothChannels() {
        let decision = DeliveryPolicy.decide(
            type: update, severity: .warning, delivery: .push, settings: .init(timeZone: .gmt), at: at("2026-07-15T12:00:00Z"))
        #expect(decision == DeliveryDecision(inApp: true, push: true, pushSuppressed: nil, interruptionLevel: .active))
    }

    @Test func typeTogglesAreHonoured() {
        var settings = UserNotificationSettings(timeZone: .gmt)
        settings.types["trip_update"] = (inApp: true, push: false)
        let noPush = DeliveryPolicy.decide(type: update, severity: .warning, delivery: .push, settings: settings, at: Date())
        #expect(noPush.push == false && noPush.pushSuppressed == .typeDisabled && noPush.inApp)
        settings.types["trip_update"] = (inApp: false, push: true)
        let noInApp = DeliveryPolicy.decide(type: update, severity: .warning, delivery: .push, settings: settings, at: Date())
        #expect(noInApp.push && !noInApp.inApp)
    }

    @Test func optInTypesAreOffUntilChosen() {
        var settings = UserNotificationSettings(timeZone: .gmt)
        let off = DeliveryPolicy.decide(type: optIn, severity: .info, delivery: .push, settings: settings, at: Date())
        #expect(!off.inApp && !off.push && off.pushSuppressed == .typeDisabled)
        settings.types["digest"] = (inApp: true, push: true)
        let on = DeliveryPolicy.decide(type: optIn, severity: .info, delivery: .push, settings: settings, at: Date())
        #expect(on.inApp && on.push)
    }

    @Test func criticalTypesIgnoreOptOutFloorAndQuietHours() {
        var settings = UserNotificationSettings(timeZone: sydney, quietHours: quiet, severityFloor: .alert)
        settings.types["volume_adjustment"] = (inApp: false, push: false)
        // 23:30 in Sydney (AEST), inside quiet hours; severity below the floor.
        let decision = DeliveryPolicy.decide(
            type: critical, severity: .warning, delivery: .push, settings: settings, at: at("2026-07-15T13:30:00Z"))
        #expect(decision.inApp && decision.push && decision.pushSuppressed == nil)
    }

    @Test func severityFloorHoldsBackPushOnly() {
        let settings = UserNotificationSettings(timeZone: .gmt, severityFloor: .alert)
        let below = DeliveryPolicy.decide(type: update, severity: .warning, delivery: .push, settings: settings, at: Date())
        #expect(!below.push && below.pushSuppressed == .severityFloor && below.inApp)
        let at = DeliveryPolicy.decide(type: update, severity: .alert, delivery: .push, settings: settings, at: Date())
        #expect(at.push)
    }

    @Test func quietHoursAcrossMidnightInTheUsersZone() {
        let settings = UserNotificationSettings(timeZone: sydney, quietHours: quiet)
        // 2026-07-15: AEST (UTC+10). 21:59 local: outside; 22:00, 23:59, 06:59: inside; 07:00: outside.
        let cases: [(String, Bool)] = [
            ("2026-07-15T11:59:00Z", true), ("2026-07-15T12:00:00Z", false), ("2026-07-15T13:59:00Z", false),
            ("2026-07-15T20:59:00Z", false), ("2026-07-15T21:00:00Z", true),
        ]
        for (instant, pushes) in cases {
            let decision = DeliveryPolicy.decide(type: update, severity: .warning, delivery: .push, settings: settings, at: at(instant))
            #expect(decision.push == pushes, "at \(instant)")
            if !pushes { #expect(decision.pushSuppressed == .quietHours) }
        }
    }

    /// The notification design keeps quiet hours per type: a type's window replaces the user's for that type,
    /// whether the user has one or not; other types keep the user's.
    @Test func aTypesQuietHoursReplaceTheUsersForThatType() throws {
        let evening = QuietHours(start: try #require(LocalTime(parsing: "18:00")), end: try #require(LocalTime(parsing: "20:00")))
        var settings = UserNotificationSettings(timeZone: sydney, quietHours: quiet)
        settings.typeQuietHours["trip_update"] = evening
        let digest = NotificationType(name: "promo", severity: .warning, delivery: .push)
        // 19:00 local (09:00Z): the type's evening window holds trip_update back; promo follows the user's 22–07.
        #expect(
            DeliveryPolicy.decide(type: update, severity: .warning, delivery: .push, settings: settings, at: at("2026-07-15T09:00:00Z")).pushSuppressed
                == .quietHours)
        #expect(DeliveryPolicy.decide(type: digest, severity: .warning, delivery: .push, settings: settings, at: at("2026-07-15T09:00:00Z")).push)
        // 23:00 local (13:00Z): inside the user's window but not the type's: trip_update goes out.
        #expect(DeliveryPolicy.decide(type: update, severity: .warning, delivery: .push, settings: settings, at: at("2026-07-15T13:00:00Z")).push)
        #expect(!DeliveryPolicy.decide(type: digest, severity: .warning, delivery: .push, settings: settings, at: at("2026-07-15T13:00:00Z")).push)
        // A user without a window of their own: the type's still applies.
        var typeOnly = UserNotificationSettings(timeZone: sydney)
        typeOnly.typeQuietHours["trip_update"] = evening
        #expect(!DeliveryPolicy.decide(type: update, severity: .warning, delivery: .push, settings: typeOnly, at: at("2026-07-15T09:00:00Z")).push)
    }

    @Test func quietHoursOnTheDaylightSavingChangeDay() {
        let settings = UserNotificationSettings(timeZone: sydney, quietHours: quiet)
        // Sydney moves to AEDT (UTC+11) at 2026-10-03T16:00Z. 20:30Z is 07:30 local: quiet hours
        // are over (a fixed +10 offset would say 06:30 and wrongly hold the push back).
        let after = DeliveryPolicy.decide(type: update, severity: .warning, delivery: .push, settings: settings, at: at("2026-10-03T20:30:00Z"))
        #expect(after.push)
        let inside = DeliveryPolicy.decide(type: update, severity: .warning, delivery: .push, settings: settings, at: at("2026-10-03T19:30:00Z"))
        #expect(!inside.push && inside.pushSuppressed == .quietHours)
        // Back to AEST at 2026-04-04T16:00Z: 20:30Z is 06:30 local, still quiet.
        let autumn = DeliveryPolicy.decide(type: update, severity: .warning, delivery: .push, settings: settings, at: at("2026-04-04T20:30:00Z"))
        #expect(!autumn.push)
    }

    @Test func highestSeverityPassesQuietHours() {
        let settings = UserNotificationSettings(timeZone: sydney, quietHours: quiet)
        let decision = DeliveryPolicy.decide(type: jobNew, severity: .alert, delivery: .push, settings: settings, at: at("2026-07-15T13:30:00Z"))
        #expect(decision.push)
    }

    @Test func inAppDeliveryNeverPushes() {
        let decision = DeliveryPolicy.decide(type: update, severity: .alert, delivery: .inApp, settings: .init(timeZone: .gmt), at: Date())
        #expect(!decision.push && decision.pushSuppressed == .inAppOnly && decision.inApp)
    }

    @Test func timeSensitiveNeedsTheUsersPermission() {
        let allowed = DeliveryPolicy.decide(type: jobNew, severity: .alert, delivery: .push, settings: .init(timeZone: .gmt), at: Date())
        #expect(allowed.interruptionLevel == .timeSensitive)
        let settings = UserNotificationSettings(timeZone: .gmt, timeSensitiveAllowed: false)
        let refused = DeliveryPolicy.decide(type: jobNew, severity: .alert, delivery: .push, settings: settings, at: Date())
        #expect(refused.interruptionLevel == .active)
    }
}
