import Crypto
import Foundation
import HeraldCore
import HeraldGTFS

/// One service alert as the push pipeline sees it, whichever way it came in (a GTFS-Realtime
/// Alerts entity, or a backend's `POST /alerts`), with the fingerprint that names its version.
///
/// Why a fingerprint: feeds repeat every alert in every message (every 30 s), so an alert is
/// pushed again only when what a rider would read changed: its effect, cause, severity,
/// texts, periods or the entities it informs. The same alert id with the same fingerprint is
/// the same version and is matched once, forever.
public struct ServiceAlert: Sendable, Equatable {
    public enum Source: Sendable, Equatable {
        case realtime(feed: String)
        case backend(feed: String?)
    }

    /// The `alert_id` of `GET /alerts`, the push's collapse and thread id.
    public var id: String
    public var source: Source
    public var severity: AlertSeverity
    public var cause: String
    public var effect: String
    public var header: String?
    public var description: String?
    public var url: String?
    /// Epoch seconds; empty means always in force.
    public var periods: [RealtimeAlert.Period]
    public var entities: [RealtimeAlert.InformedEntity]

    public init(
        id: String, source: Source, severity: AlertSeverity, cause: String, effect: String, header: String?, description: String?, url: String?,
        periods: [RealtimeAlert.Period], entities: [RealtimeAlert.InformedEntity]
    ) {
        self.id = id
        self.source = source
        self.severity = severity
        self.cause = cause
        self.effect = effect
        self.header = header
        self.description = description
        self.url = url
        self.periods = periods
        self.entities = entities
    }

    public init(realtime alert: RealtimeAlert, feed: String) {
        self.init(
            id: alert.id, source: .realtime(feed: feed), severity: AlertSeverity(gtfs: alert.severityLevel, effect: alert.effect), cause: alert.cause,
            effect: alert.effect, header: alert.header, description: alert.description, url: alert.url, periods: alert.activePeriods,
            entities: alert.informedEntities)
    }

    /// A backend's alert: each affected route and stop is an entity of its own.
    public init(posted alert: PostedAlertRecord) {
        let periods =
            alert.activeStart == nil && alert.activeEnd == nil
            ? [] : [RealtimeAlert.Period(start: alert.activeStart.map { $0 / 1000 }, end: alert.activeEnd.map { $0 / 1000 })]
        self.init(
            id: alert.id, source: .backend(feed: nil), severity: AlertSeverity(rawValue: alert.severity) ?? .info, cause: alert.cause, effect: alert.effect,
            header: alert.header, description: alert.description, url: alert.url, periods: periods,
            entities: alert.routeIDs.map { RealtimeAlert.InformedEntity(routeID: $0) } + alert.stopIDs.map { RealtimeAlert.InformedEntity(stopID: $0) })
    }

    public var feedName: String? {
        switch source {
        case .realtime(let feed): feed
        case .backend(let feed): feed
        }
    }

    /// In force at `instant` (epoch seconds).
    public func isInForce(at instant: Int64) -> Bool {
        periods.isEmpty || periods.contains { $0.contains(instant) }
    }

    /// No period covers `instant` or anything after it.
    public func hasEnded(at instant: Int64) -> Bool {
        !periods.isEmpty && periods.allSatisfy { period in period.end.map { $0 <= instant } ?? false }
    }

    /// When the alert next comes into force after `instant` (epoch seconds), if it is not in
    /// force now and has not ended.
    public func nextStart(after instant: Int64) -> Int64? {
        guard !isInForce(at: instant) else { return nil }
        return periods.compactMap(\.start).filter { $0 > instant }.min()
    }

    /// sha256 (hex) of the fields a rider reads, in a fixed order: equal for equal content
    /// however the feed orders entities or periods.
    public var fingerprint: String {
        var writer = JSONWriter()
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func number(_ value: Int64?) -> JSONValue { value.map { .number(Double($0)) } ?? .null }
        let periods = self.periods.map { [number($0.start), number($0.end)] as JSONValue }
        let entities = self.entities.map { entity -> String in
            var inner = JSONWriter()
            inner.write([
                text(entity.agencyID), text(entity.routeID), number(entity.routeType.map(Int64.init)), number(entity.directionID.map(Int64.init)),
                text(entity.trip?.tripID), text(entity.trip?.routeID), number(entity.trip?.startDay.map(Int64.init)), text(entity.stopID),
            ])
            return inner.string
        }
        writer.write([
            .string(severity.rawValue), .string(cause), .string(effect), text(header), text(description), text(url),
            .array(periods.sorted { $0.sortKey < $1.sortKey }), .array(Array(Set(entities)).sorted().map(JSONValue.string)),
        ])
        return SHA256.hash(data: Data(writer.string.utf8)).map { String(format: "%02x", $0) }.joined()
    }
}

extension JSONValue {
    fileprivate var sortKey: String {
        var writer = JSONWriter()
        writer.write(self)
        return writer.string
    }
}
