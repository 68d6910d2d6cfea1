/// An `areas.txt` row (GTFS Fares v2): an area fare leg rules depart from or arrive in.
public struct FareArea: Sendable, Equatable {
    public var id: String
    public var name: String?

    public init(id: String, name: String?) {
        self.id = id
        self.name = name
    }
}
