import HeraldGeo

/// stop_times.txt: read in file order, then grouped by trip and ordered by stop_sequence,
/// checked (duplicate sequences, trips without first or last times, backwards times) and
/// completed (times left empty between timepoints are interpolated by distance).
extension FeedParse {
    /// The rows as read, before they are put in trip order.
    struct RawStopTimes {
        var trip: [Int32] = []
        var sequence: [Int32] = []
        var stop: [Int32] = []
        var arrival: [Int32] = []
        var departure: [Int32] = []
        var pickup: [UInt8] = []
        var dropOff: [UInt8] = []
        var given: [UInt8] = []
        var distance: [Float] = []
        var line: [Int32] = []
        var headsigns: [Int32: String] = [:]
        var hasDistances = false
    }

    static let missingTime: Int32 = -1

    func readStopTimes() {
        guard
            let map = open(
                "stop_times.txt", required: true,
                columns: [
                    "trip_id", "arrival_time", "departure_time", "stop_id", "location_group_id", "location_id", "stop_sequence", "stop_headsign",
                    "start_pickup_drop_off_window", "end_pickup_drop_off_window", "pickup_type", "drop_off_type", "continuous_pickup",
                    "continuous_drop_off", "shape_dist_traveled", "timepoint", "pickup_booking_rule_id", "drop_off_booking_rule_id",
                ],
                requiredColumns: ["trip_id", "stop_sequence"])
        else { return }
        guard map["stop_id"] != nil else {
            report.error("missing_required_column", .init(file: map.file.name, line: 1, field: "stop_id", message: "stop_times.txt needs the column stop_id"))
            return
        }
        var raw = RawStopTimes()
        let estimate = map.file.bytes.count / 40
        raw.trip.reserveCapacity(estimate)
        raw.sequence.reserveCapacity(estimate)
        raw.stop.reserveCapacity(estimate)
        raw.arrival.reserveCapacity(estimate)
        raw.departure.reserveCapacity(estimate)
        raw.line.reserveCapacity(estimate)
        let tripColumn = map["trip_id"]!
        let stopColumn = map["stop_id"]!
        // Rows come grouped by trip and often by stop: remember the last id's bytes and index.
        var lastTripBytes: [UInt8] = []
        var lastTrip: Int32 = -1
        records(map) { record in
            let trip: Int32
            let sameTrip = record.withBytes(tripColumn) { $0.elementsEqual(lastTripBytes) }
            if sameTrip && lastTrip >= 0 {
                trip = lastTrip
            } else {
                guard let id = requiredText(record, map, "trip_id") else { return }
                guard let index = tripIndex[id] else {
                    dangling(record, map, "trip_id", id, "trip")
                    return
                }
                trip = index
                lastTrip = index
                lastTripBytes = Array(id.utf8)
            }
            guard let stopID = record.optionalString(stopColumn) else {
                missing(record, map, "stop_id", "stop_id is required")
                return
            }
            guard let stop = stopIndex[stopID] else {
                dangling(record, map, "stop_id", stopID, "stop")
                return
            }
            let type = feed.stops[Int(stop)].locationType
            if type != .stop && type != .boardingArea {
                report.error(
                    "location_with_unexpected_stop_time",
                    .init(
                        file: map.file.name, line: record.line, field: "stop_id", value: stopID,
                        message: "stop times must refer to stops or boarding areas, not location_type \(type.rawValue)"))
                return
            }
            guard let sequence = integer(record, map, "stop_sequence", 0...Int(Int32.max), required: true) else { return }
            let arrival = time(record, map, "arrival_time")
            let departure = time(record, map, "departure_time")
            if case .invalid = arrival { return }
            if case .invalid = departure { return }
            var given: UInt8 = 0
            if arrival.seconds != nil { given |= 1 }
            if departure.seconds != nil { given |= 2 }
            if let timepoint = map["timepoint"], !record.isEmpty(timepoint) {
                given |= UInt8(enumeration(record, map, "timepoint", 0...1, fallback: 1) + 1) << 2
            }
            raw.trip.append(trip)
            raw.sequence.append(Int32(sequence))
            raw.stop.append(stop)
            raw.arrival.append(arrival.seconds ?? Self.missingTime)
            raw.departure.append(departure.seconds ?? Self.missingTime)
            raw.pickup.append(UInt8(enumeration(record, map, "pickup_type", 0...3, fallback: 0)))
            raw.dropOff.append(UInt8(enumeration(record, map, "drop_off_type", 0...3, fallback: 0)))
            raw.given.append(given)
            raw.line.append(Int32(clamping: record.line))
            if map["shape_dist_traveled"] != nil {
                if let distance = decimal(record, map, "shape_dist_traveled", 0...Double.greatestFiniteMagnitude) {
                    raw.hasDistances = true
                    raw.distance.append(Float(distance))
                } else {
                    raw.distance.append(.nan)
                }
            }
            if let headsign = text(record, map, "stop_headsign") { raw.headsigns[Int32(raw.trip.count - 1)] = headsign }
        }
        arrange(raw)
    }

    /// Puts the rows in trip order, checks each trip, interpolates missing times.
    func arrange(_ raw: RawStopTimes) {
        let count = raw.trip.count
        // Usually already in order: sort only when needed.
        var order = Array(0..<count)
        var sorted = true
        for i in 1..<max(count, 1) where (raw.trip[i - 1], raw.sequence[i - 1]) >= (raw.trip[i], raw.sequence[i]) {
            sorted = false
            break
        }
        if !sorted {
            order.sort { (raw.trip[$0], raw.sequence[$0]) < (raw.trip[$1], raw.sequence[$1]) }
        }
        var table = StopTimeTable()
        table.tripStart = Array(repeating: 0, count: feed.trips.count + 1)
        table.stop.reserveCapacity(count)
        table.arrival.reserveCapacity(count)
        table.departure.reserveCapacity(count)
        table.sequence.reserveCapacity(count)
        table.pickupType.reserveCapacity(count)
        table.dropOffType.reserveCapacity(count)
        table.given.reserveCapacity(count)
        if raw.hasDistances { table.distances.reserveCapacity(count) }
        var lines: [Int32] = []
        lines.reserveCapacity(count)
        var previous: (trip: Int32, sequence: Int32) = (-1, -1)
        for row in order {
            let trip = raw.trip[row]
            if trip == previous.trip && raw.sequence[row] == previous.sequence {
                report.error(
                    "duplicate_key",
                    .init(
                        file: "stop_times.txt", line: Int(raw.line[row]), field: "trip_id, stop_sequence",
                        value: "\(feed.trips[Int(trip)].id) \(raw.sequence[row])", message: "the trip has this stop_sequence twice"))
                continue
            }
            previous = (trip, raw.sequence[row])
            table.tripStart[Int(trip) + 1] += 1
            table.stop.append(raw.stop[row])
            table.arrival.append(raw.arrival[row])
            table.departure.append(raw.departure[row])
            table.sequence.append(raw.sequence[row])
            table.pickupType.append(raw.pickup[row])
            table.dropOffType.append(raw.dropOff[row])
            table.given.append(raw.given[row])
            if raw.hasDistances { table.distances.append(raw.distance[row]) }
            if let headsign = raw.headsigns[Int32(row)] { table.headsigns[Int32(table.stop.count - 1)] = headsign }
            lines.append(raw.line[row])
        }
        for trip in 0..<feed.trips.count { table.tripStart[trip + 1] += table.tripStart[trip] }
        for trip in 0..<feed.trips.count {
            complete(&table, trip: Int32(trip), lines: lines)
        }
        feed.stopTimes = table
    }

    /// Checks one trip's times and fills those left empty.
    func complete(_ table: inout StopTimeTable, trip: Int32, lines: [Int32]) {
        let range = table.range(trip: trip)
        let tripID = feed.trips[Int(trip)].id
        if range.count < 2 {
            if checking {
                report.warning(
                    "unusable_trip",
                    .init(file: "trips.txt", field: "trip_id", value: tripID, message: "the trip has \(range.count) stop time(s); it needs two to be ridden"))
            }
            return
        }
        var broken = false
        var previousDeparture: Int32 = -1
        for position in range {
            let arrival = table.arrival[position]
            let departure = table.departure[position]
            if (arrival < 0) != (departure < 0) {
                report.error(
                    "stop_time_with_only_arrival_or_departure_time",
                    .init(
                        file: "stop_times.txt", line: Int(lines[position]), field: arrival < 0 ? "arrival_time" : "departure_time", value: tripID,
                        message: "a stop time needs both times or neither"))
                broken = true
            }
            if arrival >= 0 && previousDeparture >= 0 && arrival < previousDeparture {
                report.error(
                    "stop_time_with_arrival_before_previous_departure_time",
                    .init(
                        file: "stop_times.txt", line: Int(lines[position]), field: "arrival_time", value: tripID,
                        message: "arrives before the previous stop's departure"))
                broken = true
            }
            if departure >= 0 { previousDeparture = departure }
        }
        for position in [range.lowerBound, range.upperBound - 1] where table.arrival[position] < 0 && table.departure[position] < 0 {
            report.error(
                "missing_trip_edge",
                .init(
                    file: "stop_times.txt", line: Int(lines[position]), field: "arrival_time", value: tripID,
                    message: "the first and last stop of a trip need times"))
            broken = true
        }
        guard !broken else { return }
        interpolate(&table, range: range)
    }

    /// Fills runs of stops without times between two timed stops, in proportion to the
    /// distance travelled (shape_dist_traveled when the run has it, else straight lines
    /// between the stops, else equal steps).
    func interpolate(_ table: inout StopTimeTable, range: Range<Int>) {
        var position = range.lowerBound + 1
        while position < range.upperBound {
            guard table.departure[position] < 0 else {
                position += 1
                continue
            }
            let before = position - 1
            var after = position
            while table.departure[after] < 0 { after += 1 }
            var cumulative: [Double] = [0]
            let useShape = !table.distances.isEmpty && (before...after).allSatisfy { !table.distances[$0].isNaN }
            for index in (before + 1)...after {
                let step: Double
                if useShape {
                    step = Double(table.distances[index] - table.distances[index - 1])
                } else {
                    step = distance(table.stop[index - 1], table.stop[index])
                }
                cumulative.append(cumulative.last! + max(0, step))
            }
            let total = cumulative.last!
            let start = Double(table.departure[before])
            let span = Double(table.arrival[after] - table.departure[before])
            for index in (before + 1)..<after {
                let fraction = total > 0 ? cumulative[index - before] / total : Double(index - before) / Double(after - before)
                let value = Int32((start + span * fraction).rounded())
                table.arrival[index] = value
                table.departure[index] = value
            }
            position = after + 1
        }
    }

    func distance(_ a: Int32, _ b: Int32) -> Double {
        let first = feed.stops[Int(a)]
        let second = feed.stops[Int(b)]
        guard let lat1 = first.latitude, let lon1 = first.longitude, let lat2 = second.latitude, let lon2 = second.longitude else { return 0 }
        return Haversine.distanceMeters(GeoPoint(latitude: lat1, longitude: lon1), GeoPoint(latitude: lat2, longitude: lon2))
    }
}
