/// A driver's position as stored in its cell: 12 bytes, laid out contiguously per cell so a
/// query streams through a cell's drivers without touching any other array.
struct CellEntry: Sendable {
    var latitudeUnits: Int32
    var longitudeUnits: Int32
    var slot: Int32
}
