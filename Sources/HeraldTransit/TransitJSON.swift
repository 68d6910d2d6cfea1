import Foundation
import HeraldCore
import HeraldGTFS

/// The JSON shapes of the transit API contract, as the iOS app decodes them. Times are ISO 8601 in the
/// agency's zone with its offset (`2025-11-12T08:35:00+11:00`); fields the feed does not
/// have are `null`, never left out.
public enum TransitJSON {
    static func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
    static func number(_ value: Double?) -> JSONValue { value.map(JSONValue.number) ?? .null }
    static func integer<T: BinaryInteger>(_ value: T) -> JSONValue { .number(Double(value)) }

    /// Metres to a tenth.
    static func meters(_ value: Double) -> JSONValue { .number((value * 10).rounded() / 10) }

    public static func stopSummary(_ feed: LoadedFeed, _ stop: Int32) -> JSONValue {
        let s = feed.timetable.feed.stops[Int(stop)]
        return ["stop_id": .string(s.id), "stop_name": text(s.name)]
    }

    public static func stop(_ feed: LoadedFeed, _ stop: Int32, distance: Double? = nil) -> JSONValue {
        let s = feed.timetable.feed.stops[Int(stop)]
        var object: [String: JSONValue] = [
            "stop_id": .string(s.id), "stop_name": text(s.name), "stop_code": text(s.code), "stop_lat": number(s.latitude), "stop_lon": number(s.longitude),
            "location_type": integer(s.locationType.rawValue), "wheelchair_boarding": integer(s.wheelchairBoarding),
            "parent_station": s.parent >= 0 ? .string(feed.timetable.feed.stops[Int(s.parent)].id) : .null, "platform_code": text(s.platformCode),
        ]
        if let distance { object["distance_meters"] = meters(distance) }
        return .object(object)
    }

    /// A stop or station near a point, a station with its platforms (`platforms`, nearest
    /// first, each with its distance; empty for a stop outside any station).
    public static func nearbyPlace(_ feed: LoadedFeed, _ place: NearbyPlaces.Place) -> JSONValue {
        guard case .object(var object) = stop(feed, place.stop, distance: place.meters) else { return .null }
        object["platforms"] = .array(place.platforms.map { stop(feed, $0.stop, distance: $0.meters.isFinite ? $0.meters : nil) })
        return .object(object)
    }

    public static func route(_ feed: LoadedFeed, _ route: Int32) -> JSONValue {
        let r = feed.timetable.feed.routes[Int(route)]
        return [
            "route_id": .string(r.id), "route_short_name": text(r.shortName), "route_long_name": text(r.longName), "route_type": integer(r.type),
            "route_color": text(r.color), "route_text_color": text(r.textColor), "agency_id": text(r.agencyID),
        ]
    }

    /// A stop with the routes that serve it and, for a station, its platforms.
    public static func stopDetail(_ feed: LoadedFeed, _ stop: Int32) -> JSONValue {
        guard case .object(var object) = self.stop(feed, stop) else { return .null }
        object["routes"] = .array(feed.timetable.routesByStop[Int(stop)].map { route(feed, $0) })
        let children = feed.timetable.childrenByStop[stop] ?? []
        object["platforms"] = .array(children.map { self.stop(feed, $0) })
        return .object(object)
    }

    public static func departure(_ feed: LoadedFeed, _ row: DepartureBoard.Row) -> JSONValue {
        let timetable = feed.timetable
        let route = row.route >= 0 ? timetable.feed.routes[Int(row.route)] : nil
        let stop = timetable.feed.stops[Int(row.stop)]
        let wheelchair: JSONValue
        if row.trip >= 0 {
            switch timetable.feed.trips[Int(row.trip)].wheelchairAccessible {
            case 1: wheelchair = true
            case 2: wheelchair = false
            default: wheelchair = .null
            }
        } else {
            wheelchair = .null
        }
        var vehicle: JSONValue = .null
        if row.vehicleID != nil || row.occupancy != nil {
            vehicle = ["vehicle_id": text(row.vehicleID), "occupancy_status": text(row.occupancy)]
        }
        let relationship = row.added ? "ADDED" : (row.cancelled ? "CANCELED" : "SCHEDULED")
        return [
            "trip_id": .string(row.tripID), "route_id": text(route?.id), "route_short_name": text(route?.shortName), "route_color": text(route?.color),
            "headsign": text(row.headsign), "direction_id": row.directionID >= 0 ? integer(row.directionID) : .null,
            "scheduled_time": .string(timetable.zone.iso8601(row.scheduled)),
            "estimated_time": row.estimated.map { .string(timetable.zone.iso8601($0)) } ?? .null,
            "delay_seconds": row.delay.map { integer($0) } ?? .null, "platform": text(stop.platformCode), "stop_id": .string(stop.id),
            "wheelchair_accessible": wheelchair, "is_cancelled": .bool(row.cancelled), "vehicle": vehicle, "service_date": .string(ServiceDate.iso(row.day)),
            "realtime": .bool(row.estimated != nil || row.cancelled), "schedule_relationship": .string(relationship),
            "headway_seconds": row.headwaySeconds.map { integer($0) } ?? .null,
        ]
    }

    /// A vehicle as a route's active trip shows it (speed in km/h, as the app displays it).
    public static func vehicle(_ feed: LoadedFeed, _ v: RealtimeVehicle) -> JSONValue {
        [
            "vehicle_id": text(v.vehicle?.id ?? v.vehicle?.label ?? v.entityID), "label": text(v.vehicle?.label), "latitude": number(v.latitude),
            "longitude": number(v.longitude), "bearing": number(v.bearing.map { $0.rounded() }),
            "speed_kmh": number(v.speed.map { ($0 * 3.6 * 10).rounded() / 10 }), "occupancy_status": text(v.occupancyStatus),
            "current_status": text(v.currentStatus), "stop_id": text(v.stopID),
            "last_updated": v.timestamp.map { .string(feed.timetable.zone.iso8601($0)) } ?? .null,
        ]
    }

    public static func run(_ feed: LoadedFeed, _ run: RouteActivity.Run) -> JSONValue {
        let zone = feed.timetable.zone
        return [
            "trip_id": .string(run.tripID), "headsign": text(run.headsign), "direction_id": run.directionID >= 0 ? integer(run.directionID) : .null,
            "service_date": run.instance.map { .string(ServiceDate.iso($0.day)) } ?? .null,
            "vehicle": run.vehicle.map { vehicle(feed, $0) } ?? .null,
            "next_stops": .array(
                run.nextStops.map { next in
                    let stop = feed.timetable.feed.stops[Int(next.stop)]
                    return [
                        "stop_id": .string(stop.id), "stop_name": text(stop.name),
                        "arrival_time": .string(zone.iso8601(next.estimatedArrival ?? next.scheduledArrival)),
                        "scheduled_arrival_time": .string(zone.iso8601(next.scheduledArrival)),
                        "delay_seconds": next.estimatedArrival.map { integer($0 - next.scheduledArrival) } ?? .null,
                    ]
                }),
        ]
    }

    /// A GTFS-RT alert in the `/alerts` shape.
    public static func alert(_ feed: LoadedFeed?, _ alert: RealtimeAlert) -> JSONValue {
        let zone = feed?.timetable.zone
        func time(_ seconds: Int64?) -> JSONValue {
            guard let seconds else { return .null }
            return .string(zone?.iso8601(seconds) ?? Timestamp.string(epochMilliseconds: seconds * 1000))
        }
        let routes = Array(Set(alert.informedEntities.compactMap { $0.routeID ?? $0.trip?.routeID })).sorted()
        let stops = Array(Set(alert.informedEntities.compactMap(\.stopID))).sorted()
        let period = alert.activePeriods.first
        return [
            "alert_id": .string(alert.id), "severity": .string(AlertSeverity(gtfs: alert.severityLevel, effect: alert.effect).rawValue),
            "header": text(alert.header), "description": text(alert.description),
            "affected_routes": routes.isEmpty ? .null : .array(routes.map(JSONValue.string)),
            "affected_stops": stops.isEmpty ? .null : .array(stops.map(JSONValue.string)), "cause": .string(alert.cause), "effect": .string(alert.effect),
            "active_period": period.map { ["start": time($0.start), "end": time($0.end)] } ?? .null, "url": text(alert.url),
            "source": "gtfs-rt",
        ]
    }

    public static func postedAlert(_ zone: AgencyTimeZone?, _ alert: PostedAlertRecord) -> JSONValue {
        func time(_ ms: Int64?) -> JSONValue {
            guard let ms else { return .null }
            return .string(zone?.iso8601(ms / 1000) ?? Timestamp.string(epochMilliseconds: ms))
        }
        let routes = alert.routeIDs
        let stops = alert.stopIDs
        return [
            "alert_id": .string(alert.id), "severity": .string(alert.severity), "header": .string(alert.header), "description": text(alert.description),
            "affected_routes": routes.isEmpty ? .null : .array(routes.map(JSONValue.string)),
            "affected_stops": stops.isEmpty ? .null : .array(stops.map(JSONValue.string)), "cause": .string(alert.cause), "effect": .string(alert.effect),
            "active_period": ["start": time(alert.activeStart), "end": time(alert.activeEnd)], "url": text(alert.url), "source": "backend",
        ]
    }

    /// The design's favourite (`id`, `stop_id`, `stop_name`, `label`, `created_at`,
    /// `sort_order`) with `kind`, and `route_id`/`route_name` for a route favourite or
    /// `route_ids` for a stop narrowed to routes. `name` is the stop's or the route's.
    public static func favorite(_ record: FavoriteRecord, name: String?, zone: AgencyTimeZone?) -> JSONValue {
        let isRoute = record.kind == .route
        return [
            "id": .string(record.id), "kind": .string(record.kind.rawValue),
            "stop_id": isRoute ? .null : .string(record.stopID), "stop_name": isRoute ? .null : text(name),
            "route_id": text(record.routeID), "route_name": isRoute ? text(name) : .null,
            "route_ids": record.routeIDs.map { .array($0.map(JSONValue.string)) } ?? .null, "label": text(record.label),
            "created_at": .string(zone?.iso8601(record.createdAt / 1000) ?? Timestamp.string(epochMilliseconds: record.createdAt)),
            "sort_order": integer(record.sortOrder), "notifications_enabled": .bool(record.notificationsEnabled),
        ]
    }
}

/// The transit API's alert severities (`info`, `warning`, `critical`), from GTFS-RT's
/// SeverityLevel; an alert without one is judged by its effect (no service is critical,
/// reduced service and delays a warning, the rest info).
public enum AlertSeverity: String, Sendable, CaseIterable {
    case info
    case warning
    case critical

    public init(gtfs severity: String, effect: String) {
        switch severity {
        case "SEVERE": self = .critical
        case "WARNING": self = .warning
        case "INFO": self = .info
        default:
            switch effect {
            case "NO_SERVICE": self = .critical
            case "REDUCED_SERVICE", "SIGNIFICANT_DELAYS", "DETOUR", "STOP_MOVED", "MODIFIED_SERVICE": self = .warning
            default: self = .info
            }
        }
    }
}
