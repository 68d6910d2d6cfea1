import Foundation

/// agency.txt, stops.txt, routes.txt, calendar.txt, calendar_dates.txt and trips.txt.
extension FeedParse {
    func readAgencies() {
        guard
            let map = open(
                "agency.txt", required: true,
                columns: [
                    "agency_id", "agency_name", "agency_url", "agency_timezone", "agency_lang", "agency_phone", "agency_fare_url", "agency_email",
                    "cemv_support",
                ],
                requiredColumns: ["agency_name", "agency_url", "agency_timezone"])
        else { return }
        records(map) { record in
            let id = text(record, map, "agency_id")
            let name = requiredText(record, map, "agency_name")
            let url = requiredText(record, map, "agency_url")
            let zone = requiredText(record, map, "agency_timezone")
            if let id, !agencyIDs.insert(id).inserted { duplicate(record, map, "agency_id", id) }
            if let zone, TimeZone(identifier: zone) == nil {
                report.error(
                    "invalid_timezone", .init(file: map.file.name, line: record.line, field: "agency_timezone", value: zone, message: "not an IANA time zone"))
                return
            }
            if let name, let url, let zone {
                if let first = feed.agencies.first, first.timezone != zone {
                    report.error(
                        "inconsistent_agency_timezone",
                        .init(file: map.file.name, line: record.line, field: "agency_timezone", value: zone, message: "every agency must use \(first.timezone)")
                    )
                }
                feed.agencies.append(
                    Agency(id: id, name: name, url: url, timezone: zone, lang: text(record, map, "agency_lang"), phone: text(record, map, "agency_phone")))
            }
        }
        if feed.agencies.isEmpty && map.file.columns.count > 0 && !report.hasErrors {
            report.error("missing_required_field", .init(file: "agency.txt", message: "the feed has no agency"))
        }
        if feed.agencies.count > 1 && feed.agencies.contains(where: { $0.id == nil }) {
            report.error(
                "missing_required_field", .init(file: "agency.txt", field: "agency_id", message: "agency_id is required when there are several agencies"))
        }
    }

    func readStops() {
        guard
            let map = open(
                "stops.txt", required: true,
                columns: [
                    "stop_id", "stop_code", "stop_name", "tts_stop_name", "stop_desc", "stop_lat", "stop_lon", "zone_id", "stop_url", "location_type",
                    "parent_station", "stop_timezone", "wheelchair_boarding", "level_id", "platform_code", "stop_access",
                ],
                requiredColumns: ["stop_id"])
        else { return }
        var parents: [(stop: Int32, parentID: String, line: Int)] = []
        records(map) { record in
            guard let id = requiredText(record, map, "stop_id") else { return }
            let type = LocationType(rawValue: UInt8(enumeration(record, map, "location_type", 0...4, fallback: 0))) ?? .stop
            let needsPlace = type == .stop || type == .station || type == .entrance
            let name = text(record, map, "stop_name")
            if name == nil && needsPlace && checking {
                report.error(
                    "missing_stop_name",
                    .init(file: map.file.name, line: record.line, field: "stop_name", value: id, message: "stops, stations and entrances need a name"))
            }
            let latitude = decimal(record, map, "stop_lat", -90...90)
            let longitude = decimal(record, map, "stop_lon", -180...180)
            if needsPlace && (latitude == nil || longitude == nil) {
                report.error(
                    "stop_without_location",
                    .init(
                        file: map.file.name, line: record.line, field: "stop_lat", value: id,
                        message: "stops, stations and entrances need stop_lat and stop_lon"))
            }
            let index = Int32(feed.stops.count)
            if stopIndex.updateValue(index, forKey: id) != nil {
                duplicate(record, map, "stop_id", id)
                return
            }
            if let parentID = text(record, map, "parent_station") {
                parents.append((index, parentID, record.line))
            }
            let zone = text(record, map, "zone_id")
            if let zone { zoneIDs.insert(zone) }
            feed.stops.append(
                Stop(
                    id: id, code: text(record, map, "stop_code"), name: name, description: text(record, map, "stop_desc"), latitude: latitude,
                    longitude: longitude, zoneID: zone, url: text(record, map, "stop_url"), locationType: type, parent: -1,
                    timezone: text(record, map, "stop_timezone"),
                    wheelchairBoarding: UInt8(enumeration(record, map, "wheelchair_boarding", 0...2, fallback: 0)),
                    levelID: text(record, map, "level_id"), platformCode: text(record, map, "platform_code")))
        }
        // Parents may come after their children in the file.
        for (stop, parentID, line) in parents {
            guard let parent = stopIndex[parentID] else {
                report.error(
                    "foreign_key_violation", .init(file: "stops.txt", line: line, field: "parent_station", value: parentID, message: "no stop has this id"))
                continue
            }
            let childType = feed.stops[Int(stop)].locationType
            let parentType = feed.stops[Int(parent)].locationType
            if childType == .station {
                report.error(
                    "station_with_parent_station",
                    .init(file: "stops.txt", line: line, field: "parent_station", value: parentID, message: "a station cannot have a parent"))
                continue
            }
            let expected: LocationType = childType == .boardingArea ? .stop : .station
            if parentType != expected {
                report.error(
                    "wrong_parent_location_type",
                    .init(
                        file: "stops.txt", line: line, field: "parent_station", value: parentID,
                        message: "the parent must have location_type \(expected.rawValue)"))
                continue
            }
            feed.stops[Int(stop)].parent = parent
        }
        if checking {
            let declared = Set(parents.map(\.stop))
            for (index, stop) in feed.stops.enumerated() where stop.parent < 0 && [.entrance, .genericNode, .boardingArea].contains(stop.locationType) {
                if !declared.contains(Int32(index)) {
                    report.error(
                        "location_without_parent_station",
                        .init(file: "stops.txt", field: "parent_station", value: stop.id, message: "entrances, nodes and boarding areas need a parent_station"))
                }
            }
        }
    }

    func readRoutes() {
        guard
            let map = open(
                "routes.txt", required: true,
                columns: [
                    "route_id", "agency_id", "route_short_name", "route_long_name", "route_desc", "route_type", "route_url", "route_color",
                    "route_text_color", "route_sort_order", "continuous_pickup", "continuous_drop_off", "network_id", "cemv_support",
                ],
                requiredColumns: ["route_id", "route_type"])
        else { return }
        records(map) { record in
            guard let id = requiredText(record, map, "route_id") else { return }
            let agency = text(record, map, "agency_id")
            if let agency, !agencyIDs.contains(agency) { dangling(record, map, "agency_id", agency, "agency") }
            if agency == nil && feed.agencies.count > 1 { missing(record, map, "agency_id", "agency_id is required when there are several agencies") }
            let short = text(record, map, "route_short_name")
            let long = text(record, map, "route_long_name")
            if short == nil && long == nil {
                report.error(
                    "route_both_short_and_long_name_missing",
                    .init(file: map.file.name, line: record.line, field: "route_short_name", value: id, message: "a route needs a short or a long name"))
            }
            guard let type = integer(record, map, "route_type", 0...1702, required: true) else { return }
            if !(0...7).contains(type) && type != 11 && type != 12 && type < 100 {
                report.error(
                    "number_out_of_range",
                    .init(file: map.file.name, line: record.line, field: "route_type", value: String(type), message: "not a GTFS route type"))
                return
            }
            let index = Int32(feed.routes.count)
            if routeIndex.updateValue(index, forKey: id) != nil {
                duplicate(record, map, "route_id", id)
                return
            }
            feed.routes.append(
                Route(
                    id: id, agencyID: agency, shortName: short, longName: long, description: text(record, map, "route_desc"), type: type,
                    url: text(record, map, "route_url"), color: color(record, map, "route_color"), textColor: color(record, map, "route_text_color"),
                    sortOrder: integer(record, map, "route_sort_order", 0...Int(Int32.max)), networkID: text(record, map, "network_id")))
        }
    }

    func service(_ id: String) -> Int32 {
        if let index = serviceIndex[id] { return index }
        let index = Int32(feed.serviceIDs.count)
        serviceIndex[id] = index
        feed.serviceIDs.append(id)
        return index
    }

    func readCalendar() {
        let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        guard
            let map = open(
                "calendar.txt", required: false, columns: ["service_id"] + days + ["start_date", "end_date"],
                requiredColumns: ["service_id"] + days + ["start_date", "end_date"])
        else { return }
        var seen: Set<String> = []
        records(map) { record in
            guard let id = requiredText(record, map, "service_id") else { return }
            var mask: UInt8 = 0
            for (bit, day) in days.enumerated() {
                guard let flag = integer(record, map, day, 0...1, required: true) else { return }
                if flag == 1 { mask |= 1 << bit }
            }
            guard let start = date(record, map, "start_date", required: true), let end = date(record, map, "end_date", required: true) else { return }
            guard seen.insert(id).inserted else {
                duplicate(record, map, "service_id", id)
                return
            }
            if end < start {
                report.error(
                    "start_and_end_range_out_of_order",
                    .init(file: map.file.name, line: record.line, field: "end_date", value: ServiceDate.compact(end), message: "end_date is before start_date"))
                return
            }
            feed.calendars.append(CalendarRule(service: service(id), weekdays: mask, startDay: start, endDay: end))
        }
    }

    func readCalendarDates() {
        guard
            let map = open(
                "calendar_dates.txt", required: false, columns: ["service_id", "date", "exception_type"],
                requiredColumns: ["service_id", "date", "exception_type"])
        else { return }
        var seen: Set<String> = []
        records(map) { record in
            guard let id = requiredText(record, map, "service_id"), let day = date(record, map, "date", required: true),
                let type = integer(record, map, "exception_type", 1...2, required: true)
            else { return }
            guard seen.insert("\(id)\u{0}\(day)").inserted else {
                duplicate(record, map, "service_id, date", "\(id) \(ServiceDate.compact(day))")
                return
            }
            feed.calendarExceptions.append(CalendarException(service: service(id), day: day, added: type == 1))
        }
    }

    func readTrips() {
        guard
            let map = open(
                "trips.txt", required: true,
                columns: [
                    "route_id", "service_id", "trip_id", "trip_headsign", "trip_short_name", "direction_id", "block_id", "shape_id",
                    "wheelchair_accessible", "bikes_allowed", "cars_allowed",
                ],
                requiredColumns: ["route_id", "service_id", "trip_id"])
        else { return }
        records(map) { record in
            guard let id = requiredText(record, map, "trip_id"), let routeID = requiredText(record, map, "route_id"),
                let serviceID = requiredText(record, map, "service_id")
            else { return }
            guard let route = routeIndex[routeID] else {
                dangling(record, map, "route_id", routeID, "route")
                return
            }
            guard let service = serviceIndex[serviceID] else {
                dangling(record, map, "service_id", serviceID, "calendar or calendar_dates service")
                return
            }
            let index = Int32(feed.trips.count)
            if tripIndex.updateValue(index, forKey: id) != nil {
                duplicate(record, map, "trip_id", id)
                return
            }
            let shape = text(record, map, "shape_id")
            if let shape { shapeIDs.insert(shape) }
            feed.trips.append(
                Trip(
                    id: id, route: route, service: service, headsign: text(record, map, "trip_headsign"), shortName: text(record, map, "trip_short_name"),
                    directionID: Int8(enumeration(record, map, "direction_id", 0...1, fallback: -1)), blockID: text(record, map, "block_id"),
                    shapeID: shape, wheelchairAccessible: UInt8(enumeration(record, map, "wheelchair_accessible", 0...2, fallback: 0)),
                    bikesAllowed: UInt8(enumeration(record, map, "bikes_allowed", 0...2, fallback: 0))))
        }
    }
}
