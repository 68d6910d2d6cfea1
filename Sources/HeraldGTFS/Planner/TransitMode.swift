/// What kind of vehicle a route runs, as riders choose between them: GTFS `route_type`, basic
/// (0–12) and extended (100–1702, the European HVT codes), folded into the modes a trip
/// planner offers.
public enum TransitMode: String, Sendable, CaseIterable, Equatable {
    case tram
    case subway
    case rail
    case bus
    case ferry
    case cableCar = "cable_car"
    case gondola
    case funicular
    case trolleybus
    case monorail

    /// The mode of a route type; nil for types that are no mode of public transport a
    /// planner offers (taxis, miscellaneous).
    public init?(routeType: Int) {
        switch routeType {
        case 12, 405: self = .monorail
        case 0, 900...999: self = .tram
        case 1, 400...499: self = .subway
        case 2, 100...199, 300...399: self = .rail
        case 3, 200...299, 700...799: self = .bus
        case 4, 1000...1099, 1200...1299: self = .ferry
        case 5: self = .cableCar
        case 6, 1300...1399: self = .gondola
        case 7, 1400...1499: self = .funicular
        case 11, 800...899: self = .trolleybus
        default: return nil
        }
    }

    /// The leg's `mode` in an itinerary (`RAIL`, `BUS`, …).
    public var legMode: String { rawValue.uppercased() }
}
