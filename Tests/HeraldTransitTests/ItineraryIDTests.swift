import Testing

@testable import HeraldTransit

/// An itinerary's id carries its rides: it reads back exactly, stays within a channel name,
/// and anything else is no id.
@Suite struct ItineraryIDTests {
    @Test func roundTripsAndRefusesWhatIsNotAnID() {
        let rides = [
            ItineraryID.Ride(trip: 9_252, day: 20_516, shift: 0, board: 327_000, alight: 327_019),
            ItineraryID.Ride(trip: 0, day: 13_669, shift: -1_800, board: 0, alight: 1),
        ]
        let id = ItineraryID(version: "fv_9x2k3m4n5p6q7r8s", rides: rides)
        #expect(ItineraryID(id.text) == id)
        #expect(id.text.hasPrefix("v1.fv_9x2k3m4n5p6q7r8s."))
        // Five rides of large numbers stay within a channel name (200 bytes with "itinerary:").
        let five = ItineraryID(
            version: "fv_9x2k3m4n5p6q7r8s",
            rides: Array(repeating: ItineraryID.Ride(trip: 1_000_000, day: 40_000, shift: 86_400, board: 50_000_000, alight: 50_000_100), count: 5))
        #expect(five.fitsAChannel)
        #expect(ItineraryID(five.text) == five)
        for bad in ["", "v1", "v1.fv", "v2.fv.1-2-3-4-5", "v1.fv.1-2-3-4", "v1.fv.1-2-3-4-5-6", "v1.fv.1-2-3-4-!", "v1..1-2-3-4-5", "v1.fv.-1-2-3-4-5"] {
            #expect(ItineraryID(bad) == nil, "\(bad)")
        }
    }
}
