import HeraldGTFS
import Testing

/// Apps name modes in words other planners taught them, or send GTFS route types, basic or
/// extended: each folds into the mode the planner and `/routes` filter on.
@Suite struct TransitModeTests {
    @Test(
        arguments: [
            ("bus", TransitMode.bus), ("BUS", .bus), ("3", .bus), ("700", .bus), ("704", .bus), ("200", .bus), ("coach", .bus),
            ("metro", .subway), ("subway", .subway), ("1", .subway), ("401", .subway), ("Underground", .subway),
            ("train", .rail), ("rail", .rail), ("2", .rail), ("109", .rail), ("commuter-rail", .rail), ("S-Bahn", .rail),
            ("tram", .tram), ("light_rail", .tram), ("light rail", .tram), ("streetcar", .tram), ("0", .tram), ("900", .tram),
            ("ferry", .ferry), ("boat", .ferry), ("1000", .ferry), ("cable_car", .cableCar), ("5", .cableCar),
            ("gondola", .gondola), ("aerial_lift", .gondola), ("1300", .gondola), ("funicular", .funicular), ("1400", .funicular),
            ("trolleybus", .trolleybus), ("800", .trolleybus), ("monorail", .monorail), ("405", .monorail), ("12", .monorail),
        ] as [(String, TransitMode)])
    func aModeAsAppsNameIt(query: String, mode: TransitMode) {
        #expect(TransitMode(query: query) == mode)
    }

    @Test(arguments: ["", "zeppelin", "1500", "1702", "-1", "99999", "bus!"])
    func notAModeAPlannerOffers(query: String) {
        #expect(TransitMode(query: query) == nil)
    }
}
