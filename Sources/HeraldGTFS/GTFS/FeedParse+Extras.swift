/// frequencies.txt, transfers.txt, shapes.txt, fare_attributes.txt, fare_rules.txt and
/// feed_info.txt.
extension FeedParse {
    func readFrequencies() {
        guard
            let map = open(
                "frequencies.txt", required: false, columns: ["trip_id", "start_time", "end_time", "headway_secs", "exact_times"],
                requiredColumns: ["trip_id", "start_time", "end_time", "headway_secs"])
        else { return }
        records(map) { record in
            guard let tripID = requiredText(record, map, "trip_id") else { return }
            guard let trip = tripIndex[tripID] else {
                dangling(record, map, "trip_id", tripID, "trip")
                return
            }
            guard let start = time(record, map, "start_time").seconds, let end = time(record, map, "end_time").seconds else {
                if record.isEmpty(map["start_time"]!) { missing(record, map, "start_time", "start_time is required") }
                if record.isEmpty(map["end_time"]!) { missing(record, map, "end_time", "end_time is required") }
                return
            }
            guard let headway = integer(record, map, "headway_secs", 1...86_400, required: true) else { return }
            if end <= start {
                report.error(
                    end == start ? "start_and_end_range_equal" : "start_and_end_range_out_of_order",
                    .init(file: map.file.name, line: record.line, field: "end_time", value: tripID, message: "end_time must be after start_time"))
                return
            }
            let exact = enumeration(record, map, "exact_times", 0...1, fallback: 0) == 1
            if let overlapping = feed.frequencies.last(where: { $0.trip == trip && $0.start < end && start < $0.end }) {
                report.error(
                    "overlapping_frequency",
                    .init(
                        file: map.file.name, line: record.line, field: "start_time", value: tripID,
                        message: "overlaps the period starting at \(overlapping.start) s of the same trip"))
                return
            }
            feed.frequencies.append(Frequency(trip: trip, start: start, end: end, headway: Int32(headway), exactTimes: exact))
        }
        feed.frequencies.sort { ($0.trip, $0.start) < ($1.trip, $1.start) }
    }

    func readTransfers() {
        guard
            let map = open(
                "transfers.txt", required: false,
                columns: ["from_stop_id", "to_stop_id", "from_route_id", "to_route_id", "from_trip_id", "to_trip_id", "transfer_type", "min_transfer_time"],
                requiredColumns: ["transfer_type"])
        else { return }
        records(map) { record in
            var refs: [String?] = []
            for (column, lookup, target) in [
                ("from_stop_id", stopIndex, "stop"), ("to_stop_id", stopIndex, "stop"), ("from_route_id", routeIndex, "route"),
                ("to_route_id", routeIndex, "route"), ("from_trip_id", tripIndex, "trip"), ("to_trip_id", tripIndex, "trip"),
            ] {
                let value = text(record, map, column)
                if let value, lookup[value] == nil {
                    dangling(record, map, column, value, target)
                    return
                }
                refs.append(value)
            }
            let type = enumeration(record, map, "transfer_type", 0...5, fallback: 0, required: true)
            feed.transfers.append(
                Transfer(
                    fromStopID: refs[0], toStopID: refs[1], fromRouteID: refs[2], toRouteID: refs[3], fromTripID: refs[4], toTripID: refs[5],
                    transferType: type, minTransferTime: integer(record, map, "min_transfer_time", 0...Int(Int32.max))))
        }
    }

    func readShapes() {
        guard
            let map = open(
                "shapes.txt", required: false, columns: ["shape_id", "shape_pt_lat", "shape_pt_lon", "shape_pt_sequence", "shape_dist_traveled"],
                requiredColumns: ["shape_id", "shape_pt_lat", "shape_pt_lon", "shape_pt_sequence"])
        else {
            // Without shapes.txt a trip's shape_id refers to nothing.
            if !archive.contains("shapes.txt"), let shape = shapeIDs.sorted().first {
                report.error("foreign_key_violation", .init(file: "trips.txt", field: "shape_id", value: shape, message: "the feed has no shapes.txt"))
            }
            return
        }
        var seen: Set<String> = []
        var found: Set<String> = []
        records(map) { record in
            guard let id = requiredText(record, map, "shape_id"), let latitude = decimal(record, map, "shape_pt_lat", -90...90, required: true),
                let longitude = decimal(record, map, "shape_pt_lon", -180...180, required: true),
                let sequence = integer(record, map, "shape_pt_sequence", 0...Int(Int32.max), required: true)
            else { return }
            guard seen.insert("\(id)\u{0}\(sequence)").inserted else {
                duplicate(record, map, "shape_id, shape_pt_sequence", "\(id) \(sequence)")
                return
            }
            found.insert(id)
            feed.shapes.append(
                ShapePoint(
                    shapeID: id, latitude: latitude, longitude: longitude, sequence: sequence,
                    distanceTraveled: decimal(record, map, "shape_dist_traveled", 0...Double.greatestFiniteMagnitude)))
        }
        for shape in shapeIDs.subtracting(found).sorted().prefix(FeedReport.samplesPerCode) {
            report.error("foreign_key_violation", .init(file: "trips.txt", field: "shape_id", value: shape, message: "no shape has this id"))
        }
    }

    func readFares() {
        if let map = open(
            "fare_attributes.txt", required: false,
            columns: ["fare_id", "price", "currency_type", "payment_method", "transfers", "agency_id", "transfer_duration"],
            requiredColumns: ["fare_id", "price", "currency_type", "payment_method", "transfers"])
        {
            records(map) { record in
                guard let id = requiredText(record, map, "fare_id"),
                    let price = decimal(record, map, "price", 0...Double.greatestFiniteMagnitude, required: true),
                    let currency = requiredText(record, map, "currency_type")
                else { return }
                guard currency.utf8.count == 3, currency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                    report.error(
                        "invalid_currency",
                        .init(file: map.file.name, line: record.line, field: "currency_type", value: currency, message: "not an ISO 4217 code"))
                    return
                }
                guard fareIDs.insert(id).inserted else {
                    duplicate(record, map, "fare_id", id)
                    return
                }
                let agency = text(record, map, "agency_id")
                if let agency, !agencyIDs.contains(agency) {
                    dangling(record, map, "agency_id", agency, "agency")
                    return
                }
                feed.fareAttributes.append(
                    FareAttribute(
                        id: id, price: price, currency: currency.uppercased(),
                        paymentMethod: enumeration(record, map, "payment_method", 0...1, fallback: 0, required: true),
                        transfers: integer(record, map, "transfers", 0...2), agencyID: agency,
                        transferDuration: integer(record, map, "transfer_duration", 0...Int(Int32.max))))
            }
        }
        guard
            let map = open(
                "fare_rules.txt", required: false, columns: ["fare_id", "route_id", "origin_id", "destination_id", "contains_id"], requiredColumns: ["fare_id"])
        else { return }
        records(map) { record in
            guard let fare = requiredText(record, map, "fare_id") else { return }
            guard fareIDs.contains(fare) else {
                dangling(record, map, "fare_id", fare, "fare")
                return
            }
            let route = text(record, map, "route_id")
            if let route, routeIndex[route] == nil {
                dangling(record, map, "route_id", route, "route")
                return
            }
            var zones: [String?] = []
            for column in ["origin_id", "destination_id", "contains_id"] {
                let zone = text(record, map, column)
                if let zone, !zoneIDs.contains(zone) {
                    dangling(record, map, column, zone, "stop zone")
                    return
                }
                zones.append(zone)
            }
            feed.fareRules.append(FareRule(fareID: fare, routeID: route, originID: zones[0], destinationID: zones[1], containsID: zones[2]))
        }
    }

    func readFeedInfo() {
        guard
            let map = open(
                "feed_info.txt", required: false,
                columns: [
                    "feed_publisher_name", "feed_publisher_url", "feed_lang", "default_lang", "feed_start_date", "feed_end_date", "feed_version",
                    "feed_contact_email", "feed_contact_url",
                ],
                requiredColumns: ["feed_publisher_name", "feed_publisher_url", "feed_lang"])
        else { return }
        records(map) { record in
            guard feed.feedInfo == nil else {
                report.error("more_than_one_entity", .init(file: map.file.name, line: record.line, message: "feed_info.txt has one row"))
                return
            }
            guard let name = requiredText(record, map, "feed_publisher_name"), let url = requiredText(record, map, "feed_publisher_url"),
                let lang = requiredText(record, map, "feed_lang")
            else { return }
            feed.feedInfo = FeedInfo(
                publisherName: name, publisherURL: url, lang: lang, startDay: date(record, map, "feed_start_date"), endDay: date(record, map, "feed_end_date"),
                version: text(record, map, "feed_version"))
        }
    }
}
