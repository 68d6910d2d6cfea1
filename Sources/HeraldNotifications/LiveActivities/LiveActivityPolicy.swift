import Foundation
import HeraldCore
import HeraldPush

/// The update budget rules: how a change lands on an activity and when its push is due.
///
/// Why coalesce in the row: Apple throttles an app that pushes a Live Activity too often
/// (priority 10 most of all) and a device shows only the newest content anyway. A routine
/// change (an ETA that moved) waits for `routineInterval` after the last push and is
/// replaced by any newer one meanwhile; an important change (a state a person must see, an
/// alert, the end) is due at once at priority 10. A change that leaves the content as it was
/// is no change at all.
public struct LiveActivityPolicy: Sendable, Equatable {
    public var routineIntervalMs: Int64
    public var staleSeconds: Int64
    public var dismissalSeconds: Int64
    /// Attempts after which a push that keeps failing is given up (`failed`).
    public var maxAttempts = 8

    public init(routineIntervalMs: Int64, staleSeconds: Int64, dismissalSeconds: Int64) {
        self.routineIntervalMs = routineIntervalMs
        self.staleSeconds = staleSeconds
        self.dismissalSeconds = dismissalSeconds
    }

    public init(_ config: LiveActivitiesConfig) {
        self.init(
            routineIntervalMs: Int64(config.routineIntervalSeconds) * 1000, staleSeconds: Int64(config.staleSeconds),
            dismissalSeconds: Int64(config.dismissalSeconds))
    }

    /// The row after `change`, or nil when it changes nothing (the content is the same and
    /// nothing else was asked, or the activity is already ending or no longer takes changes).
    public func apply(_ change: LiveActivityChange, to row: LiveActivityRecord, now: Int64) -> LiveActivityRecord? {
        guard row.status == .active, !row.isEnding else { return nil }
        if let asOf = change.asOf, asOf < row.contentAt { return nil }
        let before = row.contentObject
        var content = before
        for (key, value) in change.patch { content[key] = value }
        let changed = content != before
        guard changed || change.ends || change.alert != nil else { return nil }
        var next = row
        next.updatedAt = now
        if row.mode == .start && change.ends {
            // Never started: nothing to end on the device.
            next.status = .cancelled
            next.dueAt = nil
            return next
        }
        next.content = LiveActivityRecord.text(.object(content))
        next.version += 1
        next.contentAt = max(change.asOf ?? now, row.contentAt)
        if change.important { next.importantVersion = next.version }
        if let alert = change.alert {
            next.alert = LiveActivityRecord.text(alert)
            next.alertVersion = next.version
        }
        if change.ends {
            next.ending = 1
            next.dismissalAt = now + dismissalSeconds * 1000
        }
        if let lease = row.leaseUntil, lease > now {
            // In flight: the sender's finish schedules the newer version.
            return next
        }
        let due = change.important ? now : max(now, row.lastSentAt.map { $0 + routineIntervalMs } ?? now)
        next.dueAt = min(row.dueAt ?? due, due)
        return next
    }

    /// When the row is due after APNs took `sentVersion` (the SQL of the finish says the
    /// same): nothing newer, nothing due; a newer important change, now; else a routine one,
    /// an interval after this push.
    public func dueAfterSend(_ row: LiveActivityRecord, sentVersion: Int64, now: Int64) -> Int64? {
        if row.mode == .start || row.version == sentVersion { return nil }
        return row.importantVersion > sentVersion ? now : now + routineIntervalMs
    }

    /// The push for the row's newest content.
    public func message(for row: LiveActivityRecord, attributesType: String) -> LiveActivityMessage {
        let event: LiveActivityEvent = row.mode == .start ? .start : (row.isEnding ? .end : .update)
        // Strictly after the last push: a device keeps content whose timestamp is not newer.
        let timestamp = max(row.contentAt / 1000, (row.sentTimestamp ?? 0) + 1)
        var alert = row.pendingAlert
        if event == .start && alert == nil, let stored = row.alert {
            alert = try? JSONDecoder().decode(LiveActivityAlert.self, from: Data(stored.utf8))
        }
        let attributes = row.attributes.flatMap { try? JSONDecoder().decode(JSONValue.self, from: Data($0.utf8)) }
        return LiveActivityMessage(
            pushID: "\(row.id):\(row.version)", activityID: row.id, app: row.appID, environment: row.environment, token: row.token,
            event: event, timestamp: timestamp, contentState: .object(row.contentObject),
            staleDate: event == .end ? nil : timestamp + staleSeconds, dismissalDate: row.dismissalAt.map { $0 / 1000 }, alert: alert,
            attributesType: event == .start ? attributesType : nil, attributes: event == .start ? attributes : nil,
            important: event == .start || row.importantVersion > row.sentVersion, tokenUpdatedAt: row.tokenUpdatedAt)
    }
}
