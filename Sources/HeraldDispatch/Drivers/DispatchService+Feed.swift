import Foundation
import HeraldCore
import HeraldGeo

/// A driver's feed: the open jobs near them.
extension DispatchService {
    /// How far a driver's feed reaches (`feed_radius_km`, else the widest offer round).
    var feedRadiusMeters: Double { (config.feedRadiusKm ?? config.maxRadiusKm) * 1000 }

    /// Open jobs within the driver's feed radius, nearest first; jobs without a position last.
    public func availableJobs(for driverID: String, limit: Int = 50) async throws -> [(job: JobRecord, distance: Double?)] {
        let driver = try await drivers.requireProfile(driverID)
        guard driver.approval == .approved else { throw DispatchError.notApproved(driver.approval) }
        guard let position = drivers.tracker.index.position(of: driverID)?.point ?? driver.point else { throw DispatchError.locationRequired }
        let radius = feedRadiusMeters
        let degrees = radius / 111_000
        let candidates = try await database.withConnection { db in
            try await self.jobs.openJobs(db, minLatitude: position.latitude - degrees, maxLatitude: position.latitude + degrees, limit: 2000)
        }
        var located: [(JobRecord, Double?)] = []
        var unlocated: [(JobRecord, Double?)] = []
        for job in candidates {
            if let point = job.point {
                let distance = Haversine.distanceMeters(position, point)
                if distance <= radius { located.append((job, distance)) }
            } else {
                unlocated.append((job, nil))
            }
        }
        located.sort { ($0.1 ?? 0, $0.0.id) < ($1.1 ?? 0, $1.0.id) }
        return Array((located + unlocated).prefix(limit))
    }
}
