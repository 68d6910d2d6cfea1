import HeraldGTFS
import HeraldStorage

/// Writes a parsed feed's files as rows of one version (`transit_stops`, …,
/// `transit_stop_times`), in batches through the engine's fastest path (`bulkInsert`).
struct FeedRowWriter {
    let database: any Database
    let versionID: String
    /// Rows per bulk call: bounded memory, and other requests get the database in between.
    let batch = 20_000
    /// Told the number of rows of each bulk call once it is written.
    var written: @Sendable (Int) -> Void = { _ in }

    func write(_ feed: TransitFeed) async throws {
        let v = BulkValue.text(versionID)
        try await rows(
            "transit_agencies", ["version_id", "agency_id", "agency_name", "agency_url", "agency_timezone", "agency_lang", "agency_phone"], feed.agencies
        ) { rows, a in
            rows.append(v, .text(a.id), .text(a.name), .text(a.url), .text(a.timezone), .text(a.lang), .text(a.phone))
        }
        try await rows(
            "transit_stops",
            [
                "version_id", "stop_id", "stop_code", "stop_name", "stop_desc", "stop_lat", "stop_lon", "zone_id", "stop_url", "location_type",
                "parent_station",
                "stop_timezone", "wheelchair_boarding", "level_id", "platform_code",
            ], feed.stops
        ) { rows, s in
            rows.append(
                v, .text(s.id), .text(s.code), .text(s.name), .text(s.description), .double(s.latitude), .double(s.longitude), .text(s.zoneID), .text(s.url),
                .integer(Int64(s.locationType.rawValue)), .text(s.parent >= 0 ? feed.stops[Int(s.parent)].id : nil), .text(s.timezone),
                .integer(Int64(s.wheelchairBoarding)), .text(s.levelID), .text(s.platformCode))
        }
        try await rows(
            "transit_routes",
            [
                "version_id", "route_id", "agency_id", "route_short_name", "route_long_name", "route_desc", "route_type", "route_url", "route_color",
                "route_text_color", "route_sort_order", "network_id",
            ], feed.routes
        ) { rows, r in
            rows.append(
                v, .text(r.id), .text(r.agencyID), .text(r.shortName), .text(r.longName), .text(r.description), .integer(Int64(r.type)), .text(r.url),
                .text(r.color), .text(r.textColor), .integer(r.sortOrder), .text(r.networkID))
        }
        try await rows(
            "transit_trips",
            [
                "version_id", "trip_id", "route_id", "service_id", "trip_headsign", "trip_short_name", "direction_id", "block_id", "shape_id",
                "wheelchair_accessible", "bikes_allowed",
            ], feed.trips
        ) { rows, t in
            rows.append(
                v, .text(t.id), .text(feed.routes[Int(t.route)].id), .text(feed.serviceIDs[Int(t.service)]), .text(t.headsign), .text(t.shortName),
                t.directionID >= 0 ? .integer(Int64(t.directionID)) : .null, .text(t.blockID), .text(t.shapeID), .integer(Int64(t.wheelchairAccessible)),
                .integer(Int64(t.bikesAllowed)))
        }
        try await writeStopTimes(feed)
        let weekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        try await rows("transit_calendar", ["version_id", "service_id"] + weekdays + ["start_date", "end_date"], feed.calendars) { rows, c in
            var values: [BulkValue] = [v, .text(feed.serviceIDs[Int(c.service)])]
            for bit in 0..<7 { values.append(.integer(Int64((c.weekdays >> bit) & 1))) }
            values.append(.text(ServiceDate.compact(c.startDay)))
            values.append(.text(ServiceDate.compact(c.endDay)))
            rows.append(row: values)
        }
        try await rows("transit_calendar_dates", ["version_id", "service_id", "date", "exception_type"], feed.calendarExceptions) { rows, e in
            rows.append(v, .text(feed.serviceIDs[Int(e.service)]), .text(ServiceDate.compact(e.day)), .integer(e.added ? 1 : 2))
        }
        try await rows("transit_frequencies", ["version_id", "trip_id", "start_time", "end_time", "headway_secs", "exact_times"], feed.frequencies) { rows, f in
            rows.append(
                v, .text(feed.trips[Int(f.trip)].id), .integer(Int64(f.start)), .integer(Int64(f.end)), .integer(Int64(f.headway)),
                .integer(f.exactTimes ? 1 : 0))
        }
        try await rows(
            "transit_transfers",
            ["version_id", "from_stop_id", "to_stop_id", "from_route_id", "to_route_id", "from_trip_id", "to_trip_id", "transfer_type", "min_transfer_time"],
            feed.transfers
        ) { rows, t in
            rows.append(
                v, .text(t.fromStopID), .text(t.toStopID), .text(t.fromRouteID), .text(t.toRouteID), .text(t.fromTripID), .text(t.toTripID),
                .integer(Int64(t.transferType)), .integer(t.minTransferTime))
        }
        try await rows("transit_shapes", ["version_id", "shape_id", "shape_pt_sequence", "shape_pt_lat", "shape_pt_lon", "shape_dist_traveled"], feed.shapes) {
            rows, p in
            rows.append(v, .text(p.shapeID), .integer(Int64(p.sequence)), .double(p.latitude), .double(p.longitude), .double(p.distanceTraveled))
        }
        try await rows(
            "transit_fare_attributes",
            ["version_id", "fare_id", "price", "currency_type", "payment_method", "transfers", "agency_id", "transfer_duration"], feed.fareAttributes
        ) { rows, f in
            rows.append(
                v, .text(f.id), .double(f.price), .text(f.currency), .integer(Int64(f.paymentMethod)), .integer(f.transfers), .text(f.agencyID),
                .integer(f.transferDuration))
        }
        try await rows("transit_fare_rules", ["version_id", "fare_id", "route_id", "origin_id", "destination_id", "contains_id"], feed.fareRules) { rows, r in
            rows.append(v, .text(r.fareID), .text(r.routeID), .text(r.originID), .text(r.destinationID), .text(r.containsID))
        }
        try await writeFaresV2(feed)
    }

    /// GTFS Fares v2's files (`transit_fare_products`, `transit_fare_leg_rules`, …).
    func writeFaresV2(_ feed: TransitFeed) async throws {
        let v = BulkValue.text(versionID)
        try await rows(
            "transit_rider_categories", ["version_id", "rider_category_id", "rider_category_name", "is_default_fare_category", "eligibility_url"],
            feed.riderCategories
        ) { rows, c in
            rows.append(v, .text(c.id), .text(c.name), .integer(c.isDefault ? 1 : 0), .text(c.eligibilityURL))
        }
        try await rows("transit_fare_media", ["version_id", "fare_media_id", "fare_media_name", "fare_media_type"], feed.fareMedia) { rows, m in
            rows.append(v, .text(m.id), .text(m.name), .integer(Int64(m.type)))
        }
        try await rows(
            "transit_fare_products", ["version_id", "fare_product_id", "fare_product_name", "rider_category_id", "fare_media_id", "amount", "currency"],
            feed.fareProducts
        ) { rows, p in
            rows.append(v, .text(p.id), .text(p.name), .text(p.riderCategoryID), .text(p.fareMediaID), .double(p.amount), .text(p.currency))
        }
        try await rows("transit_areas", ["version_id", "area_id", "area_name"], feed.areas) { rows, a in
            rows.append(v, .text(a.id), .text(a.name))
        }
        try await rows("transit_stop_areas", ["version_id", "area_id", "stop_id"], feed.stopAreas) { rows, a in
            rows.append(v, .text(a.areaID), .text(a.stopID))
        }
        try await rows("transit_networks", ["version_id", "network_id", "network_name"], feed.networks) { rows, n in
            rows.append(v, .text(n.id), .text(n.name))
        }
        try await rows("transit_route_networks", ["version_id", "network_id", "route_id"], feed.routeNetworks) { rows, n in
            rows.append(v, .text(n.networkID), .text(n.routeID))
        }
        try await rows("transit_timeframes", ["version_id", "timeframe_group_id", "start_time", "end_time", "service_id"], feed.timeframes) { rows, t in
            rows.append(v, .text(t.groupID), .integer(Int64(t.start)), .integer(Int64(t.end)), .text(feed.serviceIDs[Int(t.service)]))
        }
        try await rows(
            "transit_fare_leg_rules",
            [
                "version_id", "leg_group_id", "network_id", "from_area_id", "to_area_id", "from_timeframe_group_id", "to_timeframe_group_id", "fare_product_id",
                "rule_priority",
            ], feed.fareLegRules
        ) { rows, r in
            rows.append(
                v, .text(r.legGroupID), .text(r.networkID), .text(r.fromAreaID), .text(r.toAreaID), .text(r.fromTimeframeGroupID), .text(r.toTimeframeGroupID),
                .text(r.fareProductID), .integer(r.priority))
        }
        try await rows("transit_fare_leg_join_rules", ["version_id", "from_network_id", "to_network_id", "from_stop_id", "to_stop_id"], feed.fareLegJoinRules) {
            rows, r in
            rows.append(v, .text(r.fromNetworkID), .text(r.toNetworkID), .text(r.fromStopID), .text(r.toStopID))
        }
        try await rows(
            "transit_fare_transfer_rules",
            [
                "version_id", "from_leg_group_id", "to_leg_group_id", "transfer_count", "duration_limit", "duration_limit_type", "fare_transfer_type",
                "fare_product_id",
            ], feed.fareTransferRules
        ) { rows, r in
            rows.append(
                v, .text(r.fromLegGroupID), .text(r.toLegGroupID), .integer(r.transferCount), .integer(r.durationLimit), .integer(r.durationLimitType),
                .integer(Int64(r.fareTransferType)), .text(r.fareProductID))
        }
    }

    func rows<Element>(_ table: String, _ columns: [String], _ elements: [Element], _ add: (inout BulkRows, Element) -> Void) async throws {
        var rows = BulkRows(table: table, columns: columns, capacity: min(batch, elements.count))
        for element in elements {
            add(&rows, element)
            if rows.rowCount >= batch { try await flush(&rows) }
        }
        try await flush(&rows)
    }

    private func flush(_ rows: inout BulkRows) async throws {
        let count = rows.rowCount
        try await database.bulkInsert(rows)
        rows.removeAll()
        written(count)
    }

    func writeStopTimes(_ feed: TransitFeed) async throws {
        let columns = [
            "version_id", "trip_id", "stop_sequence", "stop_id", "arrival_time", "departure_time", "stop_headsign", "pickup_type", "drop_off_type",
            "shape_dist_traveled", "timepoint",
        ]
        let table = feed.stopTimes
        var rows = BulkRows(table: "transit_stop_times", columns: columns, capacity: min(batch, table.count))
        let version = BulkValue.text(versionID)
        for trip in 0..<feed.trips.count {
            let tripID = BulkValue.text(feed.trips[trip].id)
            for position in table.range(trip: Int32(trip)) {
                let given = table.given[position]
                let timepoint = Int(given >> 2)
                rows.append(
                    version, tripID, .integer(Int64(table.sequence[position])), .text(feed.stops[Int(table.stop[position])].id),
                    given & 1 != 0 ? .integer(Int64(table.arrival[position])) : .null, given & 2 != 0 ? .integer(Int64(table.departure[position])) : .null,
                    .text(table.headsigns[Int32(position)]), .integer(Int64(table.pickupType[position])), .integer(Int64(table.dropOffType[position])),
                    table.distances.isEmpty || table.distances[position].isNaN ? .null : .double(Double(table.distances[position])),
                    timepoint == 0 ? .null : .integer(Int64(timepoint - 1)))
                if rows.rowCount >= batch { try await flush(&rows) }
            }
        }
        try await flush(&rows)
    }
}
