/// A driver's car: one row of `vehicles`.
public struct VehicleRecord: Sendable, Equatable, Codable {
    public var driverID: String
    public var make: String
    public var model: String
    public var color: String
    public var licensePlate: String
    public var capacity: Int
    /// Comma-separated ride types the car serves (`STANDARD,XL`).
    public var rideTypes: String
    public var createdAt: Int64
    public var updatedAt: Int64

    public var rideTypeList: [String] { rideTypes.split(separator: ",").map(String.init) }

    enum CodingKeys: String, CodingKey {
        case make, model, color, capacity
        case driverID = "driver_id"
        case licensePlate = "license_plate"
        case rideTypes = "ride_types"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }
}
