import Foundation
import HeraldGeo

/// Stops and stations by place, for "stops within 500 m": a fixed grid of cells about a
/// kilometre high, each listing the stops inside it.
///
/// Why a static grid and not the driver grid of `HeraldGeo`: stops never move, so the cells
/// are built once, sorted, and read without locks; a query reads the few cells the circle
/// touches and measures exact (haversine) distances only for the stops in them.
public struct StopGrid: Sendable, Equatable {
    /// Cell size in degrees of latitude (and of longitude: cells get narrower toward the
    /// poles, and the query widens its longitude span by 1/cos(latitude) to match).
    static let cellDegrees = 0.01

    /// Stops of cell `key` are `members[ranges[key]]`.
    let ranges: [Int64: Range<Int>]
    let members: [Int32]
    let latitudes: [Double]
    let longitudes: [Double]

    /// Indexes the stops and stations of `feed` that have a position (entrances, nodes and
    /// boarding areas are parts of a station, not places to look for).
    public init(feed: TransitFeed) {
        var cells: [Int64: [Int32]] = [:]
        var latitudes = [Double](repeating: .nan, count: feed.stops.count)
        var longitudes = [Double](repeating: .nan, count: feed.stops.count)
        for (index, stop) in feed.stops.enumerated() where stop.locationType == .stop || stop.locationType == .station {
            guard let latitude = stop.latitude, let longitude = stop.longitude else { continue }
            latitudes[index] = latitude
            longitudes[index] = longitude
            cells[Self.key(Self.cell(latitude), Self.cell(longitude)), default: []].append(Int32(index))
        }
        var ranges: [Int64: Range<Int>] = [:]
        var members: [Int32] = []
        for key in cells.keys.sorted() {
            let start = members.count
            members.append(contentsOf: cells[key]!)
            ranges[key] = start..<members.count
        }
        self.ranges = ranges
        self.members = members
        self.latitudes = latitudes
        self.longitudes = longitudes
    }

    static func cell(_ degrees: Double) -> Int32 {
        Int32((degrees / cellDegrees).rounded(.down))
    }

    static func key(_ row: Int32, _ column: Int32) -> Int64 {
        Int64(row) << 32 | Int64(UInt32(bitPattern: column))
    }

    /// Stops within `radius` metres of a point, nearest first (ties by stop index), at most `limit`.
    public func nearby(latitude: Double, longitude: Double, radiusMeters radius: Double, limit: Int) -> [(stop: Int32, meters: Double)] {
        let center = GeoPoint(latitude: latitude, longitude: longitude)
        let latitudeSpan = radius / 111_195 + Self.cellDegrees
        let cosine = max(cos(latitude * .pi / 180), 0.01)
        let longitudeSpan = min(180, radius / (111_195 * cosine) + Self.cellDegrees)
        let rows = Self.cell(max(-90, latitude - latitudeSpan))...Self.cell(min(90, latitude + latitudeSpan))
        var columns = [Self.cell(longitude - longitudeSpan)...Self.cell(longitude + longitudeSpan)]
        // Near the antimeridian the span wraps to the other side.
        let lowest = Self.cell(-180)
        let highest = Self.cell(180)
        if columns[0].lowerBound < lowest {
            columns = [lowest...columns[0].upperBound, (columns[0].lowerBound + highest - lowest)...highest]
        } else if columns[0].upperBound > highest {
            columns = [columns[0].lowerBound...highest, lowest...(columns[0].upperBound - highest + lowest)]
        }
        var found: [(stop: Int32, meters: Double)] = []
        for row in rows {
            for span in columns {
                for column in span {
                    guard let range = ranges[Self.key(row, column)] else { continue }
                    for member in members[range] {
                        let meters = Haversine.distanceMeters(center, GeoPoint(latitude: latitudes[Int(member)], longitude: longitudes[Int(member)]))
                        if meters <= radius { found.append((member, meters)) }
                    }
                }
            }
        }
        found.sort { ($0.meters, $0.stop) < ($1.meters, $1.stop) }
        return Array(found.prefix(limit))
    }

    public var byteCount: Int { members.capacity * 4 + latitudes.capacity * 16 + ranges.count * 40 }
}
