import HeraldGTFS

/// A planned itinerary's rides, named so that any node can follow it without storing it:
/// the feed version and, per ride, its trip, service day, shift and the stop time positions
/// it boards and alights at (`v1.<version>.<ride>.<ride>…`, each ride five base-36 numbers).
///
/// Why in the id: every node serves the same feed version, so the id means the same runs
/// everywhere, and nothing is written per plan. An itinerary of another version (the feed
/// changed since) no longer resolves: its followers are told it expired and plan again. At
/// most five rides (four transfers) keep `itinerary:{id}` within a channel name's 200 bytes.
public struct ItineraryID: Sendable, Equatable {
    public struct Ride: Sendable, Equatable {
        public var trip: Int32
        public var day: Int32
        public var shift: Int32
        public var board: Int32
        public var alight: Int32
    }

    public var version: String
    public var rides: [Ride]

    /// Shifts are stored non-negative (a frequency run may start before its stop times).
    static let shiftOffset: Int32 = 1 << 20

    public init(version: String, rides: [Ride]) {
        self.version = version
        self.rides = rides
    }

    public init(version: String, journey: Journey) {
        self.version = version
        rides = journey.legs.compactMap(\.ride).map { Ride(trip: $0.trip, day: $0.day, shift: $0.shift, board: Int32($0.board), alight: Int32($0.alight)) }
    }

    /// Whether `itinerary:{text}` fits a channel name.
    public var fitsAChannel: Bool { ("itinerary:" + text).utf8.count <= 190 }

    public var text: String {
        (["v1", version]
            + rides.map { ride in
                [ride.trip, ride.day, ride.shift + Self.shiftOffset, ride.board, ride.alight].map { String($0, radix: 36) }.joined(separator: "-")
            }).joined(separator: ".")
    }

    public init?(_ text: String) {
        guard text.utf8.count <= 190 else { return nil }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts.count <= 7, parts[0] == "v1", !parts[1].isEmpty else { return nil }
        var rides: [Ride] = []
        for part in parts.dropFirst(2) {
            let fields = part.split(separator: "-", omittingEmptySubsequences: false)
            let numbers = fields.compactMap { field in field.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } ? Int32(field, radix: 36) : nil }
            guard fields.count == 5, numbers.count == 5 else { return nil }
            rides.append(Ride(trip: numbers[0], day: numbers[1], shift: numbers[2] - Self.shiftOffset, board: numbers[3], alight: numbers[4]))
        }
        self.init(version: String(parts[1]), rides: rides)
    }

    /// The feed serving this version, when every ride names a run that version has: a trip,
    /// stop times of it, a day its service runs, and a shift one of its frequencies makes.
    ///
    /// Why every field: the id comes from a client, and each number reaches day and time
    /// arithmetic. Only what the planner could have written is accepted.
    public func feed(in snapshot: TransitSnapshot) -> LoadedFeed? {
        guard let feed = snapshot.feeds.first(where: { $0.version.id == version }) else { return nil }
        let timetable = feed.timetable
        let valid = rides.allSatisfy { Self.isRun($0, of: timetable) }
        return valid && !rides.isEmpty ? feed : nil
    }

    static func isRun(_ ride: Ride, of timetable: Timetable) -> Bool {
        let times = timetable.feed.stopTimes
        guard ride.trip >= 0, Int(ride.trip) < timetable.feed.trips.count else { return false }
        let range = times.range(trip: ride.trip)
        guard range.contains(Int(ride.board)), range.contains(Int(ride.alight)), ride.board < ride.alight else { return false }
        guard timetable.calendar.isActive(service: timetable.feed.trips[Int(ride.trip)].service, day: ride.day) else { return false }
        guard let frequencies = timetable.frequenciesByTrip[ride.trip] else { return ride.shift == 0 }
        // A frequency run starts within one of the trip's windows.
        let start = Int64(times.departure[range.lowerBound]) + Int64(ride.shift)
        return frequencies.contains { Int64($0.start) <= start && start <= Int64($0.end) }
    }
}
