import Crypto
import Foundation
import HeraldCore
import HeraldGTFS
import HeraldNotifications

/// How a service alert becomes a push: the one table that maps the transit design's
/// severities onto Herald's, and that design's push headers and payload keys.
///
/// | `/alerts` severity | push `severity` (transit design) | Herald severity (floor, quiet hours) | `apns-expiration` | interruption level |
/// |---|---|---|---|---|
/// | `info` | `minor` | `info` | now + 30 min | `active` |
/// | `warning` | `major` | `warning` | now + 1 h | `time-sensitive` if the user allows it |
/// | `critical` | `cancelled` | `alert` (passes quiet hours) | now + 2 h | `time-sensitive` if the user allows it |
///
/// Why `critical` is the design's `cancelled`: it is the level GTFS-Realtime gives `SEVERE`
/// alerts and `NO_SERVICE` effects, and the only one the design lets through quiet hours.
public struct AlertPushPolicy: Sendable, Equatable {
    /// `transitapp://alerts/{alert_id}`: `{alert_id}` is replaced (percent-encoded).
    public var deepLink: String
    /// Send `title-loc-key`/`loc-key` (rendered by the app's Localizable.strings) beside the text.
    public var localized: Bool

    public init(deepLink: String = "transitapp://alerts/{alert_id}", localized: Bool = true) {
        self.deepLink = deepLink
        self.localized = localized
    }

    public static func pushSeverity(_ severity: AlertSeverity) -> String {
        switch severity {
        case .info: "minor"
        case .warning: "major"
        case .critical: "cancelled"
        }
    }

    public static func heraldSeverity(_ severity: AlertSeverity) -> Severity {
        switch severity {
        case .info: .info
        case .warning: .warning
        case .critical: .alert
        }
    }

    /// Seconds the provider keeps trying (`apns-expiration`, FCM/Web Push TTL).
    public static func ttlSeconds(_ severity: AlertSeverity) -> Int {
        switch severity {
        case .info: 1800
        case .warning: 3600
        case .critical: 7200
        }
    }

    /// Asked per send; the notification policy lowers it to `active` for a user who has not
    /// allowed time-sensitive notifications.
    public static func interruptionLevel(_ severity: AlertSeverity) -> InterruptionLevel {
        severity == .info ? .active : .timeSensitive
    }

    /// The collapse and thread id: the alert id, or for an id APNs would refuse (over 64
    /// bytes) a stable digest of it.
    public static func collapseKey(_ alertID: String) -> String {
        if alertID.utf8.count <= 64 { return alertID }
        return "alert-" + SHA256.hash(data: Data(alertID.utf8)).prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// The loc-key suffix of an effect: `ALERT_TITLE_DELAY` for significant delays (the
    /// transit app's key), `ALERT_TITLE_GENERAL` for none, else the GTFS-Realtime effect name.
    public static func effectKey(_ effect: String) -> String {
        switch effect {
        case "SIGNIFICANT_DELAYS": "DELAY"
        case "UNKNOWN_EFFECT", "OTHER_EFFECT", "NO_EFFECT", "": "GENERAL"
        default: effect
        }
    }

    public func link(_ alertID: String) -> String {
        let encoded = alertID.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) ?? alertID
        return deepLink.replacingOccurrences(of: "{alert_id}", with: encoded)
    }

    /// The draft for `users`: the same content for each (the alert's own routes and stops),
    /// collapse id = thread id = alert id.
    /// `line` names what the alert is about for the title (a route's short name, else a stop's).
    /// `delayMinutes` is the delay realtime predictions show on the alert's routes, when known:
    /// a delay alert then uses the design's `ALERT_BODY_DELAY_SHORT` with `[minutes, cause]`.
    /// `sounds` false is a later version inside the cooldown: the same collapse id replaces
    /// what the phone shows, at the `passive` level, which plays no sound.
    public func draft(
        _ alert: ServiceAlert, users: [String], line: String?, routeID: String?, stopIDs: [String], delayMinutes: Int? = nil, sounds: Bool = true
    ) -> NotificationDraft {
        let effect = Self.effectKey(alert.effect)
        let header = alert.header ?? Self.fallbackHeader(effect: alert.effect, line: line)
        let cause = Self.causeText(alert.cause)
        let minutes = effect == "DELAY" ? delayMinutes : nil
        var data: [String: JSONValue] = [
            "alert_id": .string(alert.id), "route_id": routeID.map(JSONValue.string) ?? .null,
            "stop_ids": .array(stopIDs.prefix(20).map(JSONValue.string)), "severity": .string(Self.pushSeverity(alert.severity)),
            "deep_link": .string(link(alert.id)),
        ]
        if let minutes { data["delay_minutes"] = .number(Double(minutes)) }
        if !sounds { data["update"] = true }
        if localized {
            let keys = Self.localizationKeys(effect: effect, delayMinutes: minutes)
            data["title_loc_key"] = .string(keys.title)
            data["title_loc_args"] = [.string(line ?? "")]
            data["loc_key"] = .string(keys.body)
            data["loc_args"] = minutes.map { [.string(String($0)), .string(cause)] } ?? [.string(header), .string(cause)]
        }
        // The plain text beside the keys: what FCM, Web Push and an app without the keys show.
        let body = alert.description ?? minutes.map { Self.delayText(minutes: $0, cause: cause) }
        let collapse = Self.collapseKey(alert.id)
        return NotificationDraft(
            userIDs: users, type: "service_alert", title: Self.clip(header, 200), body: body.map { Self.clip($0, 500) }, data: data,
            severity: Self.heraldSeverity(alert.severity), category: "SERVICE_ALERT", threadID: collapse, collapseKey: collapse,
            ttlSeconds: Self.ttlSeconds(alert.severity), interruptionLevel: sounds ? Self.interruptionLevel(alert.severity) : .passive)
    }

    /// The `title-loc-key` and `loc-key` of an alert push. The transit design's contract is
    /// `ALERT_TITLE_DELAY` [line] with `ALERT_BODY_DELAY_SHORT` [minutes, cause]; every other
    /// effect follows the same pattern with its own name (`docs/transit-alerts.md` lists them).
    public static func localizationKeys(effect: String, delayMinutes: Int?) -> (title: String, body: String) {
        if effect == "DELAY", delayMinutes != nil { return ("ALERT_TITLE_DELAY", "ALERT_BODY_DELAY_SHORT") }
        return ("ALERT_TITLE_\(effect)", "ALERT_BODY_\(effect)")
    }

    /// Every key an alert push can carry, for the app's `Localizable.strings`.
    public static let allLocalizationKeys: [String] = {
        let effects = [
            "GENERAL", "DELAY", "NO_SERVICE", "REDUCED_SERVICE", "DETOUR", "ADDITIONAL_SERVICE", "MODIFIED_SERVICE", "STOP_MOVED",
            "ACCESSIBILITY_ISSUE",
        ]
        return effects.flatMap { ["ALERT_TITLE_\($0)", "ALERT_BODY_\($0)"] } + ["ALERT_BODY_DELAY_SHORT", "ALERT_DIGEST_TITLE", "ALERT_DIGEST_BODY"]
    }()

    /// "10 min delay due to signal failure" (the English of `ALERT_BODY_DELAY_SHORT`).
    static func delayText(minutes: Int, cause: String) -> String {
        cause.isEmpty ? "\(minutes) min delay" : "\(minutes) min delay due to \(cause)"
    }

    /// One push for the alerts quiet hours held back from a user: their headers, the highest
    /// severity among them, `alert_ids`, and a deep link to the alert list.
    public func digest(_ alerts: [ServiceAlert], userID: String) -> NotificationDraft {
        let rank: [AlertSeverity: Int] = [.info: 0, .warning: 1, .critical: 2]
        let severity = alerts.map(\.severity).max { rank[$0]! < rank[$1]! } ?? .info
        let headers = alerts.map { $0.header ?? Self.fallbackHeader(effect: $0.effect, line: nil) }
        let title = alerts.count == 1 ? headers[0] : "\(alerts.count) service alerts"
        // The transit app's tap handler reads `alert_id` and nothing else: the most severe alert
        // (the first by id among equals) is the one it records as opened.
        let lead = alerts.max { rank[$0.severity]! < rank[$1.severity]! || (rank[$0.severity]! == rank[$1.severity]! && $0.id > $1.id) }!
        var data: [String: JSONValue] = [
            "alert_id": .string(lead.id), "alert_ids": .array(alerts.map { .string($0.id) }), "digest": true,
            "severity": .string(Self.pushSeverity(severity)),
            "deep_link": .string(alerts.count == 1 ? link(alerts[0].id) : deepLink.replacingOccurrences(of: "{alert_id}", with: "")),
        ]
        if localized {
            data["title_loc_key"] = "ALERT_DIGEST_TITLE"
            data["title_loc_args"] = [.string(String(alerts.count))]
            data["loc_key"] = "ALERT_DIGEST_BODY"
            data["loc_args"] = [.string(headers[0])]
        }
        return NotificationDraft(
            userIDs: [userID], type: "service_alert", title: Self.clip(title, 200), body: Self.clip(headers.joined(separator: "\n"), 500), data: data,
            severity: Self.heraldSeverity(severity), category: "SERVICE_ALERT", threadID: "alerts-digest", collapseKey: "alerts-digest",
            ttlSeconds: 4 * 3600, interruptionLevel: .active)
    }

    static func fallbackHeader(effect: String, line: String?) -> String {
        let what = effect.replacingOccurrences(of: "_", with: " ").lowercased()
        let text = what.prefix(1).uppercased() + what.dropFirst()
        return line.map { "\(text): \($0)" } ?? text
    }

    /// "TECHNICAL_PROBLEM" → "technical problem" (the transit app's second loc-arg).
    static func causeText(_ cause: String) -> String {
        cause == "UNKNOWN_CAUSE" || cause == "OTHER_CAUSE" ? "" : cause.replacingOccurrences(of: "_", with: " ").lowercased()
    }

    static func clip(_ text: String, _ limit: Int) -> String {
        text.count <= limit ? text : String(text.prefix(limit - 1)) + "…"
    }
}
