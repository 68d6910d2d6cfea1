import HeraldCore
import HeraldGeo
import Testing

@testable import HeraldTrips

/// The fields a parse is refused for; records an issue unless it throws 422 `VALIDATION_FAILED`.
private func refusedFields<T>(sourceLocation: SourceLocation = #_sourceLocation, _ parse: () throws -> T) -> [String] {
    do {
        let parsed = try parse()
        Issue.record("expected a validation error, parsed \(parsed)", sourceLocation: sourceLocation)
        return []
    } catch let error as APIError {
        #expect(error.status == 422, sourceLocation: sourceLocation)
        #expect(error.code == .validationFailed, sourceLocation: sourceLocation)
        #expect(error.code.rawValue == "VALIDATION_FAILED", sourceLocation: sourceLocation)
        guard case .array(let items)? = error.details?["fields"] else {
            Issue.record("no fields in \(String(describing: error.details))", sourceLocation: sourceLocation)
            return []
        }
        return items.compactMap { $0["field"]?.stringValue }
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
        return []
    }
}

@Suite struct RideRequestInputTests {
    static let metersPerDegree = 111_226.3

    static func place(_ latitude: Double, _ longitude: Double, address: String? = nil, placeID: String? = nil) -> JSONValue {
        var object: [String: JSONValue] = ["latitude": .number(latitude), "longitude": .number(longitude)]
        if let address { object["address"] = .string(address) }
        if let placeID { object["place_id"] = .string(placeID) }
        return .object(object)
    }

    /// The rideshare design's example request: San Francisco → Oakland.
    static func exampleBody() -> [String: JSONValue] {
        [
            "pickup": place(37.7749, -122.4194, address: "1 Market St, San Francisco, CA", placeID: "ChIJIQBpAG2ahYAR_6128GcTUEo"),
            "dropoff": place(37.8044, -122.2712),
            "ride_type": .string("STANDARD"),
            "passenger_count": .number(2),
            "payment_method_id": .string("pm_xyz"),
        ]
    }

    static func exampleBody(_ change: (inout [String: JSONValue]) -> Void) -> [String: JSONValue] {
        var body = exampleBody()
        change(&body)
        return body
    }

    static func refused(_ body: [String: JSONValue], config: TripsConfig = TripsConfig(), sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        refusedFields(sourceLocation: sourceLocation) { try RideRequestInput.parse(body, config: config) }
    }

    static func parse(_ body: [String: JSONValue], config: TripsConfig = TripsConfig()) throws -> RideRequestInput {
        try RideRequestInput.parse(body, config: config)
    }

    // MARK: valid bodies

    @Test func exampleBodyParses() throws {
        let input = try Self.parse(Self.exampleBody())
        #expect(input.pickup.point == GeoPoint(latitude: 37.7749, longitude: -122.4194))
        #expect(input.pickup.address == "1 Market St, San Francisco, CA")
        #expect(input.pickup.placeID == "ChIJIQBpAG2ahYAR_6128GcTUEo")
        #expect(input.dropoff.point == GeoPoint(latitude: 37.8044, longitude: -122.2712))
        #expect(input.dropoff.address == nil)
        #expect(input.dropoff.placeID == nil)
        #expect(input.rideType == "STANDARD")
        #expect(input.passengerCount == 2)
        #expect(input.paymentMethodID == "pm_xyz")
        #expect(input.confirmedSurge == nil)
    }

    @Test func defaultsWhenOmitted() throws {
        let input = try Self.parse(["pickup": Self.place(37.7749, -122.4194), "dropoff": Self.place(37.8044, -122.2712)])
        #expect(input.rideType == "STANDARD")
        #expect(input.passengerCount == 1)
        #expect(input.paymentMethodID == nil)
        #expect(input.confirmedSurge == nil)
    }

    @Test func nullsCountAsOmitted() throws {
        let input = try Self.parse(
            Self.exampleBody {
                $0["ride_type"] = .null
                $0["passenger_count"] = .null
                $0["payment_method_id"] = .null
                $0["surge_multiplier"] = .null
            })
        #expect(input.rideType == "STANDARD")
        #expect(input.passengerCount == 1)
        #expect(input.paymentMethodID == nil)
        #expect(input.confirmedSurge == nil)
    }

    @Test func largerRideTypeCarriesMore() throws {
        let input = try Self.parse(
            Self.exampleBody {
                $0["ride_type"] = .string("XL")
                $0["passenger_count"] = .number(6)
            })
        #expect(input.rideType == "XL")
        #expect(input.passengerCount == 6)
        #expect(
            Self.refused(
                Self.exampleBody {
                    $0["ride_type"] = .string("XL")
                    $0["passenger_count"] = .number(7)
                }) == ["passenger_count"])
    }

    @Test func confirmedSurgeIsKept() throws {
        #expect(try Self.parse(Self.exampleBody { $0["surge_multiplier"] = .number(1.5) }).confirmedSurge == 1.5)
        #expect(try Self.parse(Self.exampleBody { $0["surge_multiplier"] = .number(1) }).confirmedSurge == 1.0)
        #expect(try Self.parse(Self.exampleBody { $0["surge_multiplier"] = .number(10) }).confirmedSurge == 10)
    }

    @Test func addressIsTrimmedAndMayBe500Characters() throws {
        let trimmed = try Self.parse(Self.exampleBody { $0["pickup"] = Self.place(37.7749, -122.4194, address: "  1 Market St \n") })
        #expect(trimmed.pickup.address == "1 Market St")
        let long = String(repeating: "a", count: 500)
        #expect(try Self.parse(Self.exampleBody { $0["pickup"] = Self.place(37.7749, -122.4194, address: long) }).pickup.address == long)
    }

    @Test func boundaryCoordinatesAreAccepted() throws {
        // Both ends of each range, kept within the 300 km limit by moving the other end along.
        let south = try Self.parse(["pickup": Self.place(-90, 0), "dropoff": Self.place(-89.99, 0)])
        #expect(south.pickup.point.latitude == -90)
        let dateLine = try Self.parse(["pickup": Self.place(0, 180), "dropoff": Self.place(0, -179.99)])
        #expect(dateLine.pickup.point.longitude == 180)
        #expect(dateLine.dropoff.point.longitude == -179.99)
    }

    @Test func dropoffJustOver50MetresIsAccepted() throws {
        let input = try Self.parse(Self.exampleBody { $0["dropoff"] = Self.place(37.7749 + 60 / Self.metersPerDegree, -122.4194) })
        #expect(input.dropoff.point.latitude > input.pickup.point.latitude)
    }

    @Test func aLongButPlausibleRideIsAccepted() throws {
        // ≈ 245 km north
        _ = try Self.parse(Self.exampleBody { $0["dropoff"] = Self.place(37.7749 + 2.2, -122.4194) })
    }

    // MARK: refused bodies

    @Test func latitudeOutOfRange() {
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = Self.place(91, -122.4194) }) == ["pickup.latitude"])
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = Self.place(-90.5, -122.4194) }) == ["pickup.latitude"])
    }

    @Test func longitudeOutOfRange() {
        #expect(Self.refused(Self.exampleBody { $0["dropoff"] = Self.place(37.8044, -181) }) == ["dropoff.longitude"])
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = Self.place(37.7749, 180.5) }) == ["pickup.longitude"])
    }

    @Test func pickupIsRequired() {
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = nil }) == ["pickup"])
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = .null }) == ["pickup"])
        #expect(Self.refused(Self.exampleBody { $0["dropoff"] = nil }) == ["dropoff"])
    }

    @Test func pickupMustBeAnObject() {
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = .string("37.7749,-122.4194") }) == ["pickup"])
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = .array([.number(37.7749), .number(-122.4194)]) }) == ["pickup"])
    }

    @Test func coordinatesMustBeNumbers() {
        let stringLatitude: JSONValue = .object(["latitude": .string("37.7749"), "longitude": .number(-122.4194)])
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = stringLatitude }) == ["pickup.latitude"])
        let missingLatitude: JSONValue = .object(["longitude": .number(-122.4194)])
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = missingLatitude }) == ["pickup.latitude"])
        let boolLongitude: JSONValue = .object(["latitude": .number(37.8044), "longitude": .bool(true)])
        #expect(Self.refused(Self.exampleBody { $0["dropoff"] = boolLongitude }) == ["dropoff.longitude"])
    }

    @Test func unknownFieldsAreRefused() {
        #expect(Self.refused(Self.exampleBody { $0["tip"] = .number(5) }) == ["tip"])
        let withZip: JSONValue = .object(["latitude": .number(37.7749), "longitude": .number(-122.4194), "zip": .string("94105")])
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = withZip }) == ["pickup.zip"])
    }

    @Test func unknownRideType() {
        #expect(Self.refused(Self.exampleBody { $0["ride_type"] = .string("LIMO") }) == ["ride_type"])
        #expect(Self.refused(Self.exampleBody { $0["ride_type"] = .string("standard") }) == ["ride_type"])
        #expect(Self.refused(Self.exampleBody { $0["ride_type"] = .number(1) }) == ["ride_type"])
    }

    @Test func rideTypeIsRequiredWhenThereIsNoStandard() {
        var config = TripsConfig()
        config.rideTypes = ["XL": RideTypeConfig(capacity: 6)]
        #expect(Self.refused(Self.exampleBody { $0["ride_type"] = nil }, config: config) == ["ride_type"])
    }

    @Test func passengerCountWithinCapacity() {
        #expect(Self.refused(Self.exampleBody { $0["passenger_count"] = .number(0) }) == ["passenger_count"])
        #expect(Self.refused(Self.exampleBody { $0["passenger_count"] = .number(5) }) == ["passenger_count"])
        #expect(Self.refused(Self.exampleBody { $0["passenger_count"] = .number(-1) }) == ["passenger_count"])
    }

    @Test func passengerCountMustBeAWholeNumber() {
        #expect(Self.refused(Self.exampleBody { $0["passenger_count"] = .number(2.5) }) == ["passenger_count"])
        #expect(Self.refused(Self.exampleBody { $0["passenger_count"] = .string("2") }) == ["passenger_count"])
    }

    @Test func dropoffTooCloseToPickup() {
        #expect(Self.refused(Self.exampleBody { $0["dropoff"] = Self.place(37.7749, -122.4194) }) == ["dropoff"])
        #expect(Self.refused(Self.exampleBody { $0["dropoff"] = Self.place(37.7749 + 30 / Self.metersPerDegree, -122.4194) }) == ["dropoff"])
    }

    @Test func dropoffTooFarFromPickup() {
        // ≈ 1000 km north
        #expect(Self.refused(Self.exampleBody { $0["dropoff"] = Self.place(37.7749 + 9, -122.4194) }) == ["dropoff"])
    }

    @Test func surgeMultiplierRange() {
        #expect(Self.refused(Self.exampleBody { $0["surge_multiplier"] = .number(0.5) }) == ["surge_multiplier"])
        #expect(Self.refused(Self.exampleBody { $0["surge_multiplier"] = .number(10.5) }) == ["surge_multiplier"])
        #expect(Self.refused(Self.exampleBody { $0["surge_multiplier"] = .string("1.5") }) == ["surge_multiplier"])
    }

    @Test func addressTooLong() {
        let long = String(repeating: "a", count: 501)
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = Self.place(37.7749, -122.4194, address: long) }) == ["pickup.address"])
    }

    @Test func addressWithControlCharacters() {
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = Self.place(37.7749, -122.4194, address: "1 Market\u{07} St") }) == ["pickup.address"])
        #expect(Self.refused(Self.exampleBody { $0["dropoff"] = Self.place(37.8044, -122.2712, address: "Lake Merritt\nOakland") }) == ["dropoff.address"])
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = Self.place(37.7749, -122.4194, address: "1 Market\u{7F} St") }) == ["pickup.address"])
    }

    @Test func emptyOrNonStringAddress() {
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = Self.place(37.7749, -122.4194, address: "   ") }) == ["pickup.address"])
        let numericAddress: JSONValue = .object(["latitude": .number(37.7749), "longitude": .number(-122.4194), "address": .number(1)])
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = numericAddress }) == ["pickup.address"])
    }

    @Test func placeIDTooLong() {
        let long = String(repeating: "p", count: 201)
        #expect(Self.refused(Self.exampleBody { $0["pickup"] = Self.place(37.7749, -122.4194, placeID: long) }) == ["pickup.place_id"])
    }

    @Test func paymentMethodMustBeAString() {
        #expect(Self.refused(Self.exampleBody { $0["payment_method_id"] = .number(42) }) == ["payment_method_id"])
    }

    @Test func everyBadFieldIsNamedAtOnce() {
        let body = Self.exampleBody {
            $0["extra"] = .bool(true)
            $0["pickup"] = Self.place(91, -122.4194)
            $0["passenger_count"] = .number(0)
            $0["surge_multiplier"] = .number(0.5)
        }
        let fields = Self.refused(body)
        #expect(fields.count == 4)
        #expect(Set(fields) == ["extra", "pickup.latitude", "passenger_count", "surge_multiplier"])
    }

    @Test func messageNamesTheField() {
        do {
            _ = try Self.parse(Self.exampleBody { $0["pickup"] = Self.place(91, -122.4194) })
            Issue.record("expected a validation error")
        } catch let error as APIError {
            #expect(error.message.contains("pickup.latitude"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }
}

@Suite struct VehicleInputTests {
    static func body() -> [String: JSONValue] {
        [
            "make": .string("Toyota"),
            "model": .string("Prius"),
            "color": .string("Blue"),
            "license_plate": .string("7ABC123"),
            "capacity": .number(4),
            "ride_types": .array([.string("STANDARD"), .string("XL"), .string("STANDARD")]),
        ]
    }

    static func body(_ change: (inout [String: JSONValue]) -> Void) -> [String: JSONValue] {
        var b = body()
        change(&b)
        return b
    }

    static func refused(_ body: [String: JSONValue], sourceLocation: SourceLocation = #_sourceLocation) -> [String] {
        refusedFields(sourceLocation: sourceLocation) { try VehicleInput.parse(body, config: TripsConfig()) }
    }

    @Test func validBodyParses() throws {
        let vehicle = try VehicleInput.parse(Self.body(), config: TripsConfig())
        #expect(vehicle.make == "Toyota")
        #expect(vehicle.model == "Prius")
        #expect(vehicle.color == "Blue")
        #expect(vehicle.licensePlate == "7ABC123")
        #expect(vehicle.capacity == 4)
        // Duplicates are dropped, order kept.
        #expect(vehicle.rideTypes == ["STANDARD", "XL"])
    }

    @Test func defaults() throws {
        let vehicle = try VehicleInput.parse(
            Self.body {
                $0["capacity"] = nil
                $0["ride_types"] = nil
            }, config: TripsConfig())
        #expect(vehicle.capacity == 4)
        #expect(vehicle.rideTypes == ["STANDARD"])
    }

    @Test func textIsTrimmed() throws {
        let vehicle = try VehicleInput.parse(Self.body { $0["make"] = .string("  Toyota ") }, config: TripsConfig())
        #expect(vehicle.make == "Toyota")
    }

    @Test func missingMake() {
        #expect(Self.refused(Self.body { $0["make"] = nil }) == ["make"])
        #expect(Self.refused(Self.body { $0["make"] = .string("") }) == ["make"])
        #expect(Self.refused(Self.body { $0["make"] = .string(String(repeating: "m", count: 61)) }) == ["make"])
    }

    @Test func emptyBodyNamesEveryRequiredField() {
        #expect(Set(Self.refused([:])) == ["make", "model", "color", "license_plate"])
    }

    @Test func capacityRange() throws {
        #expect(Self.refused(Self.body { $0["capacity"] = .number(0) }) == ["capacity"])
        #expect(Self.refused(Self.body { $0["capacity"] = .number(21) }) == ["capacity"])
        #expect(Self.refused(Self.body { $0["capacity"] = .number(2.5) }) == ["capacity"])
        #expect(try VehicleInput.parse(Self.body { $0["capacity"] = .number(20) }, config: TripsConfig()).capacity == 20)
    }

    @Test func unknownRideType() {
        #expect(Self.refused(Self.body { $0["ride_types"] = .array([.string("STANDARD"), .string("LIMO")]) }) == ["ride_types[1]"])
        #expect(Self.refused(Self.body { $0["ride_types"] = .array([.number(1)]) }) == ["ride_types[0]"])
    }

    @Test func rideTypesMustBeANonEmptyList() {
        #expect(Self.refused(Self.body { $0["ride_types"] = .array([]) }) == ["ride_types"])
        #expect(Self.refused(Self.body { $0["ride_types"] = .string("STANDARD") }) == ["ride_types"])
    }

    @Test func unknownField() {
        #expect(Self.refused(Self.body { $0["year"] = .number(2020) }) == ["year"])
    }
}
