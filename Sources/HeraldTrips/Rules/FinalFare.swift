import HeraldGeo

/// What a completed trip costs (the rideshare design: "COMPLETED (fare finalized)").
///
/// Why from the trail: the estimate assumed a straight line times a detour factor; the fare
/// charged follows the road actually driven, which is the shown samples (accurate, not
/// flagged as spoofed) from where the ride started, joined in order. With fewer than two such
/// samples nothing was measured, so the estimated route distance stands in (and says so).
/// Time is start to completion. Rates, minimum and the surge the rider confirmed apply as in
/// the estimate, without the traffic factor: the time is known now.
public struct FinalFare: Sendable, Equatable {
    public var amountMinor: Int64
    public var distanceMeters: Int64
    public var durationSeconds: Int64
    /// `trail` when the samples measured the distance, `estimate` when too few were shown.
    public var distanceSource: String

    public init(
        trail: [GeoPoint], startedAt: Int64, completedAt: Int64, estimatedDistanceMeters: Int64, model: FareModel, surge: Double
    ) {
        var distance = 0.0
        for index in trail.indices.dropFirst() {
            distance += Haversine.distanceMeters(trail[index - 1], trail[index])
        }
        let measured = trail.count >= 2
        distanceMeters = measured ? Int64(distance.rounded()) : estimatedDistanceMeters
        distanceSource = measured ? "trail" : "estimate"
        durationSeconds = max(0, (completedAt - startedAt) / 1000)
        let fare = model.fare(distanceMeters: Double(distanceMeters), durationSeconds: Double(durationSeconds)) * surge
        amountMinor = Int64(fare.rounded(.toNearestOrAwayFromZero))
    }
}
