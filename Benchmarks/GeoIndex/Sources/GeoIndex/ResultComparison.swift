/// Decides whether Herald's and Redis's answers to one query agree.
///
/// Redis stores positions as 52-bit geohashes (≈ 0.3 m off), Herald to 1e-7° (≈ 1 cm), so
/// two drivers whose distances differ by less than that can swap places, and a driver within
/// that of the k-th result or of the radius can be in one answer and not the other. Those
/// are "ties"; anything else is a bug.
struct ResultComparison {
    struct Match {
        var id: String
        var distanceMeters: Double
    }

    enum Verdict: String {
        case exact
        case tiesOnly = "ties_only"
        case mismatch
    }

    let verdict: Verdict
    /// Largest |Herald − Redis| distance over the drivers both returned.
    let maxDistanceDifference: Double
    let reason: String?

    init(herald: [Match], redis: [Match], radiusMeters: Double, limit: Int, toleranceMeters: Double = 1) {
        let heraldDistance = Dictionary(herald.map { ($0.id, $0.distanceMeters) }, uniquingKeysWith: { a, _ in a })
        let redisDistance = Dictionary(redis.map { ($0.id, $0.distanceMeters) }, uniquingKeysWith: { a, _ in a })
        var maxDifference = 0.0
        for (id, d) in heraldDistance {
            if let r = redisDistance[id] { maxDifference = max(maxDifference, abs(d - r)) }
        }
        maxDistanceDifference = maxDifference
        if herald.map(\.id) == redis.map(\.id) {
            verdict = .exact
            reason = nil
            return
        }
        func explained(_ d: Double, otherFull: Bool, otherLast: Double?) -> Bool {
            if abs(d - radiusMeters) <= toleranceMeters { return true }
            if otherFull, let otherLast, abs(d - otherLast) <= toleranceMeters { return true }
            return false
        }
        var problems: [String] = []
        for match in herald where redisDistance[match.id] == nil {
            if !explained(match.distanceMeters, otherFull: redis.count == limit, otherLast: redis.last?.distanceMeters) {
                problems.append("only Herald has \(match.id) at \(match.distanceMeters) m")
            }
        }
        for match in redis where heraldDistance[match.id] == nil {
            if !explained(match.distanceMeters, otherFull: herald.count == limit, otherLast: herald.last?.distanceMeters) {
                problems.append("only Redis has \(match.id) at \(match.distanceMeters) m")
            }
        }
        let common = herald.filter { redisDistance[$0.id] != nil }
        let redisRank = Dictionary(redis.enumerated().map { ($0.element.id, $0.offset) }, uniquingKeysWith: { a, _ in a })
        for i in common.indices {
            for j in common.indices where j > i {
                let a = common[i]
                let b = common[j]
                if redisRank[a.id]! > redisRank[b.id]! && abs(a.distanceMeters - b.distanceMeters) > toleranceMeters {
                    problems.append("order of \(a.id) (\(a.distanceMeters) m) and \(b.id) (\(b.distanceMeters) m) differs")
                }
            }
        }
        verdict = problems.isEmpty ? .tiesOnly : .mismatch
        reason = problems.isEmpty ? nil : problems.prefix(3).joined(separator: "; ")
    }
}
