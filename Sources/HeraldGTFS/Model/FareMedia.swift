/// A `fare_media.txt` row (GTFS Fares v2): a holder fare products are used with.
public struct FareMedia: Sendable, Equatable {
    public var id: String
    public var name: String?
    /// 0 none (cash), 1 paper ticket, 2 transit card, 3 contactless bank card (cEMV), 4 mobile app.
    public var type: Int

    public init(id: String, name: String?, type: Int) {
        self.id = id
        self.name = name
        self.type = type
    }
}
