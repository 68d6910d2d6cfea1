import Foundation
import HeraldCore
import HeraldGTFS

/// The stored form of an alert version (`transit_alert_versions.alert`): the node that
/// processes a version pushes exactly the content that was fingerprinted, whatever the feed
/// says by then.
extension ServiceAlert {
    public var json: JSONValue {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        func number(_ value: Int64?) -> JSONValue { value.map { .number(Double($0)) } ?? .null }
        let source: JSONValue
        switch self.source {
        case .realtime(let feed): source = ["kind": "realtime", "feed": .string(feed)]
        case .backend(let feed): source = ["kind": "backend", "feed": text(feed)]
        }
        return [
            "id": .string(id), "source": source, "severity": .string(severity.rawValue), "cause": .string(cause), "effect": .string(effect),
            "header": text(header), "description": text(description), "url": text(url),
            "periods": .array(periods.map { ["start": number($0.start), "end": number($0.end)] }),
            "entities": .array(
                entities.map { entity in
                    [
                        "agency_id": text(entity.agencyID), "route_id": text(entity.routeID), "route_type": number(entity.routeType.map(Int64.init)),
                        "direction_id": number(entity.directionID.map(Int64.init)), "trip_id": text(entity.trip?.tripID),
                        "trip_route_id": text(entity.trip?.routeID), "trip_start_day": number(entity.trip?.startDay.map(Int64.init)),
                        "stop_id": text(entity.stopID),
                    ]
                }),
        ]
    }

    public init?(json: JSONValue) {
        guard case .object(let o) = json, case .string(let id)? = o["id"], case .object(let source)? = o["source"],
            case .string(let severityText)? = o["severity"], let severity = AlertSeverity(rawValue: severityText)
        else { return nil }
        func text(_ value: JSONValue?) -> String? {
            if case .string(let s)? = value { return s }
            return nil
        }
        func number(_ value: JSONValue?) -> Int64? {
            if case .number(let n)? = value { return Int64(n) }
            return nil
        }
        let kind = text(source["kind"])
        let origin: Source = kind == "realtime" ? .realtime(feed: text(source["feed"]) ?? "") : .backend(feed: text(source["feed"]))
        var periods: [RealtimeAlert.Period] = []
        if case .array(let list)? = o["periods"] {
            for case .object(let p) in list { periods.append(RealtimeAlert.Period(start: number(p["start"]), end: number(p["end"]))) }
        }
        var entities: [RealtimeAlert.InformedEntity] = []
        if case .array(let list)? = o["entities"] {
            for case .object(let e) in list {
                var trip: RealtimeTripDescriptor?
                if text(e["trip_id"]) != nil || text(e["trip_route_id"]) != nil {
                    var descriptor = RealtimeTripDescriptor()
                    descriptor.tripID = text(e["trip_id"])
                    descriptor.routeID = text(e["trip_route_id"])
                    descriptor.startDay = number(e["trip_start_day"]).map(Int32.init)
                    trip = descriptor
                }
                entities.append(
                    RealtimeAlert.InformedEntity(
                        agencyID: text(e["agency_id"]), routeID: text(e["route_id"]), routeType: number(e["route_type"]).map(Int.init),
                        directionID: number(e["direction_id"]).map(Int.init), trip: trip, stopID: text(e["stop_id"])))
            }
        }
        self.init(
            id: id, source: origin, severity: severity, cause: text(o["cause"]) ?? "UNKNOWN_CAUSE", effect: text(o["effect"]) ?? "UNKNOWN_EFFECT",
            header: text(o["header"]), description: text(o["description"]), url: text(o["url"]), periods: periods, entities: entities)
    }
}
