import Foundation

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

    /// The words apps send for a mode, besides the modes' own names: what other
    /// planners and the iOS transit app call them (`metro`, `light_rail`, `train`,
    /// OpenTripPlanner's `SUBWAY`/`CABLE_CAR`/`GONDOLA`, …), lower-cased.
    static let synonyms: [String: TransitMode] = [
        "metro": .subway, "underground": .subway, "u_bahn": .subway, "light_rail": .tram, "lightrail": .tram, "streetcar": .tram,
        "train": .rail, "commuter_rail": .rail, "regional_rail": .rail, "intercity": .rail, "heavy_rail": .rail, "s_bahn": .rail,
        "coach": .bus, "boat": .ferry, "water": .ferry, "cable_tram": .cableCar, "aerial_lift": .gondola, "cable_way": .gondola,
        "trolley_bus": .trolleybus,
    ]

    /// Every word `init(query:)` reads (lower case, `_` between words), for documents.
    public static var queryWords: [String] { (allCases.map(\.rawValue) + synonyms.keys).sorted() }

    /// A mode as an app names it: a mode's name or a synonym (any case, `-` or space for
    /// `_`), or a GTFS route type, basic or extended (`700` is a bus, `401` a metro); nil
    /// for anything else (and for types no planner offers, such as taxis).
    public init?(query text: String) {
        let word = text.trimmingCharacters(in: .whitespaces).lowercased().replacingOccurrences(of: "-", with: "_").replacingOccurrences(of: " ", with: "_")
        if let number = Int(word) {
            self.init(routeType: number)
        } else if let mode = TransitMode(rawValue: word) ?? Self.synonyms[word] {
            self = mode
        } else {
            return nil
        }
    }

    /// The leg's `mode` in an itinerary (`RAIL`, `BUS`, …).
    public var legMode: String { rawValue.uppercased() }
}
