/// A `route_networks.txt` row (GTFS Fares v2): the network a route belongs to (one each).
public struct RouteNetwork: Sendable, Equatable {
    public var networkID: String
    public var routeID: String

    public init(networkID: String, routeID: String) {
        self.networkID = networkID
        self.routeID = routeID
    }
}
