/// A `networks.txt` row (GTFS Fares v2): a group of routes fare leg rules name.
public struct FareNetwork: Sendable, Equatable {
    public var id: String
    public var name: String?

    public init(id: String, name: String?) {
        self.id = id
        self.name = name
    }
}
