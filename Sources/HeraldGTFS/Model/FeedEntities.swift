/// The rows of a GTFS feed, after parsing and validation. References between files are
/// array indices (`Int32`, -1 for none), so the timetable follows them without lookups.

public struct Agency: Sendable, Equatable {
    public var id: String?
    public var name: String
    public var url: String
    public var timezone: String
    public var lang: String?
    public var phone: String?
}

/// GTFS `location_type`.
public enum LocationType: UInt8, Sendable, Equatable {
    case stop = 0
    case station = 1
    case entrance = 2
    case genericNode = 3
    case boardingArea = 4
}

public struct Stop: Sendable, Equatable {
    public var id: String
    public var code: String?
    public var name: String?
    public var description: String?
    /// Required for stops, stations and entrances; optional for generic nodes and boarding areas.
    public var latitude: Double?
    public var longitude: Double?
    public var zoneID: String?
    public var url: String?
    public var locationType: LocationType
    /// Index of the parent station (or, for a boarding area, its platform); -1 for none.
    public var parent: Int32
    public var timezone: String?
    /// 0 unknown/inherited, 1 possible, 2 not possible.
    public var wheelchairBoarding: UInt8
    public var levelID: String?
    public var platformCode: String?
}

public struct Route: Sendable, Equatable {
    public var id: String
    public var agencyID: String?
    public var shortName: String?
    public var longName: String?
    public var description: String?
    /// GTFS route_type (0 tram, 1 metro, 2 rail, 3 bus, 4 ferry, …, or an extended type).
    public var type: Int
    public var url: String?
    public var color: String?
    public var textColor: String?
    public var sortOrder: Int?
    /// `routes.network_id` (GTFS Fares v2); `route_networks.txt`, when the feed has it, wins.
    public var networkID: String? = nil
}

public struct Trip: Sendable, Equatable {
    public var id: String
    public var route: Int32
    public var service: Int32
    public var headsign: String?
    public var shortName: String?
    /// 0 or 1; -1 when the feed gives none.
    public var directionID: Int8
    public var blockID: String?
    public var shapeID: String?
    /// 0 unknown, 1 accessible, 2 not accessible.
    public var wheelchairAccessible: UInt8
    public var bikesAllowed: UInt8
}

/// A `calendar.txt` row: the weekdays a service runs between two dates.
public struct CalendarRule: Sendable, Equatable {
    public var service: Int32
    /// Bit 0 = Monday … bit 6 = Sunday.
    public var weekdays: UInt8
    public var startDay: Int32
    public var endDay: Int32
}

/// A `calendar_dates.txt` row: a service added (1) or removed (2) on one date.
public struct CalendarException: Sendable, Equatable {
    public var service: Int32
    public var day: Int32
    public var added: Bool
}

/// A `frequencies.txt` row: the trip runs every `headway` seconds from `start` to `end`.
public struct Frequency: Sendable, Equatable {
    public var trip: Int32
    public var start: Int32
    public var end: Int32
    public var headway: Int32
    /// 1: exactly scheduled departures; 0: frequency-based (headway only).
    public var exactTimes: Bool
}

public struct Transfer: Sendable, Equatable {
    public var fromStopID: String?
    public var toStopID: String?
    public var fromRouteID: String?
    public var toRouteID: String?
    public var fromTripID: String?
    public var toTripID: String?
    public var transferType: Int
    public var minTransferTime: Int?
}

public struct ShapePoint: Sendable, Equatable {
    public var shapeID: String
    public var latitude: Double
    public var longitude: Double
    public var sequence: Int
    public var distanceTraveled: Double?
}

public struct FareAttribute: Sendable, Equatable {
    public var id: String
    public var price: Double
    public var currency: String
    public var paymentMethod: Int
    public var transfers: Int?
    public var agencyID: String?
    public var transferDuration: Int?
}

public struct FareRule: Sendable, Equatable {
    public var fareID: String
    public var routeID: String?
    public var originID: String?
    public var destinationID: String?
    public var containsID: String?
}

public struct FeedInfo: Sendable, Equatable {
    public var publisherName: String
    public var publisherURL: String
    public var lang: String
    public var startDay: Int32?
    public var endDay: Int32?
    public var version: String?
}
