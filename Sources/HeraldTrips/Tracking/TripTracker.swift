import Foundation
import HeraldCore
import HeraldDispatch
import HeraldGeo
import HeraldRealtime
import Synchronization

/// What this node knows about each driver's current trip, and the judgement of every
/// location sample: the rate limit for the driver's state, the fraud checks, whether the
/// rider sees it, and when the ETAs moved enough to tell.
///
/// Why in memory: a sample must be judged in microseconds, and the judgement depends on the
/// previous samples (speed, jumps, runs of 0.0 m accuracy). The trip a driver is on is read
/// from the database once and then kept current by the `$trips` room, where every node
/// announces each trip change (so an accept on one node reaches the node holding the
/// driver's socket at once); an entry is re-read after a while in case an announcement was lost.
public final class TripTracker: RealtimeSubscriber {
    /// The pseudo-room of trip announcements; no client can subscribe to it.
    public static let announcementRoom = "$trips"

    public let connectionID: UInt64 = (1 << 60) | UInt64.random(in: 0..<(1 << 40))
    public var userID: String? { nil }
    public var isClientConnection: Bool { false }

    /// What the tracker needs of a trip.
    public struct TripSnapshot: Sendable, Equatable {
        public var id: String
        public var riderID: String
        public var driverID: String
        public var state: TripState
        public var pickup: GeoPoint
        public var dropoff: GeoPoint

        public init(_ t: TripRecord) {
            id = t.id
            riderID = t.riderID
            driverID = t.driverID
            state = t.state
            pickup = GeoPoint(latitude: t.pickupLatitude, longitude: t.pickupLongitude)
            dropoff = GeoPoint(latitude: t.dropoffLatitude, longitude: t.dropoffLongitude)
        }

        init?(json: JSONValue) {
            guard let id = json["trip_id"]?.stringValue, let rider = json["rider_id"]?.stringValue, let driver = json["driver_id"]?.stringValue,
                let state = json["state"]?.stringValue.flatMap(TripState.init(rawValue:)),
                let pickup = GeoPoint.validated(
                    latitude: json["pickup_latitude"]?.doubleValue ?? .nan, longitude: json["pickup_longitude"]?.doubleValue ?? .nan),
                let dropoff = GeoPoint.validated(
                    latitude: json["dropoff_latitude"]?.doubleValue ?? .nan, longitude: json["dropoff_longitude"]?.doubleValue ?? .nan)
            else { return nil }
            self.id = id
            riderID = rider
            driverID = driver
            self.state = state
            self.pickup = pickup
            self.dropoff = dropoff
        }

        var json: JSONValue {
            [
                "trip_id": .string(id), "rider_id": .string(riderID), "driver_id": .string(driverID), "state": .string(state.rawValue),
                "pickup_latitude": .number(pickup.latitude), "pickup_longitude": .number(pickup.longitude),
                "dropoff_latitude": .number(dropoff.latitude), "dropoff_longitude": .number(dropoff.longitude),
            ]
        }
    }

    struct Tracked {
        var trip: TripSnapshot
        var fraud: LocationFraudCheck
        var deviation: RouteDeviationCheck
        var eta: ETAEstimator
        var lastSample: (point: GeoPoint, at: Int64)?
        var lastShared: (at: Int64, sequence: Int64?)?
        var sharedETA: (pickup: ETAEstimator.ETA?, dropoff: ETAEstimator.ETA?)?
        var pushedETA: (pickup: ETAEstimator.ETA?, dropoff: ETAEstimator.ETA?)?
        /// The ETA the trip's Live Activities were last given (whole minutes, and to where).
        var activityETA: (minutes: Int, kind: String)?
        var ordinal: Int64 = 0
    }

    struct Driver {
        var limit: LocationRateLimit
        var tracked: Tracked?
        /// On a dispatch job (on the way to or at a pickup): the active rate applies.
        var onJob = false
        var checkedAt: Int64
    }

    /// Reads the driver's active trip and whether they are on a dispatch job.
    public typealias Loader = @Sendable (_ driverID: String) async throws -> (trip: TripRecord?, onJob: Bool)

    let config: TripsConfig
    private let state = Mutex<[String: Driver]>([:])
    private let loader: Loader
    /// How long a cached answer is trusted without an announcement.
    let refreshAfterMs: Int64 = 10_000

    public init(config: TripsConfig, loader: @escaping Loader) {
        self.config = config
        self.loader = loader
    }

    // MARK: Announcements

    /// Every node hears each trip change here (`$trips`).
    public func deliver(_ event: RealtimeEvent) {
        guard event.room == Self.announcementRoom,
            let json = try? JSONDecoder().decode(JSONValue.self, from: Data(event.payloadJSON.utf8)),
            let snapshot = TripSnapshot(json: json)
        else { return }
        apply(snapshot, at: event.createdAt)
    }

    /// Takes in a trip's new state (a change on this node, or an announcement).
    public func apply(_ snapshot: TripSnapshot, at now: Int64) {
        state.withLock { drivers in
            guard var driver = drivers[snapshot.driverID] else {
                // Not seen here yet: the first sample reads the database.
                return
            }
            if snapshot.state.isActive {
                if driver.tracked?.trip.id == snapshot.id {
                    driver.tracked?.trip = snapshot
                } else {
                    driver.tracked = makeTracked(snapshot)
                }
            } else if driver.tracked?.trip.id == snapshot.id {
                driver.tracked = nil
            }
            driver.checkedAt = now
            drivers[snapshot.driverID] = driver
        }
    }

    func makeTracked(_ trip: TripSnapshot) -> Tracked {
        Tracked(
            trip: trip, fraud: LocationFraudCheck(rules: config.location),
            deviation: RouteDeviationCheck(pickup: trip.pickup, dropoff: trip.dropoff, minimumCorridorMeters: config.location.routeDeviationMeters),
            eta: ETAEstimator(detourFactor: config.routeDetourFactor, minimumSpeedMps: config.minimumSpeedMps, defaultSpeedMps: config.averageSpeedMps))
    }

    /// Reads the driver's trip when this node has no fresh answer.
    func refresh(_ driverID: String, now: Int64) async {
        let stale = state.withLock { drivers in drivers[driverID].map { now - $0.checkedAt > refreshAfterMs } ?? true }
        guard stale else { return }
        guard let (trip, onJob) = try? await loader(driverID) else { return }
        state.withLock { drivers in
            var driver = drivers[driverID] ?? Driver(limit: LocationRateLimit(rules: config.location), checkedAt: now)
            if let trip, trip.state.isActive {
                if driver.tracked?.trip.id != trip.id { driver.tracked = makeTracked(TripSnapshot(trip)) } else { driver.tracked?.trip = TripSnapshot(trip) }
            } else {
                driver.tracked = nil
            }
            driver.onJob = onJob
            driver.checkedAt = now
            drivers[driverID] = driver
        }
    }

    // MARK: Samples

    /// The rate limit for the driver's state: nil admits the sample.
    public func admit(driverID: String, at now: Int64) async -> LocationThrottle? {
        await refresh(driverID, now: now)
        return state.withLock { drivers -> LocationThrottle? in
            var driver = drivers[driverID] ?? Driver(limit: LocationRateLimit(rules: config.location), checkedAt: now)
            let active = driver.onJob || (driver.tracked?.trip.state.isActive ?? false)
            let wait = driver.limit.take(now: now, active: active)
            drivers[driverID] = driver
            return wait.map { LocationThrottle(retryAfterMs: $0, limit: driver.limit.describe(active: active)) }
        }
    }

    /// What one accepted sample of a trip turns into.
    public struct Judgement: Sendable {
        public var trip: TripSnapshot
        public var row: TripLocationRow
        public var warnings: [LocationFraudCheck.Warning]
        /// `driver_location` for the rider, when the sample is shared.
        public var location: JSONValue?
        /// `eta_update`, when an ETA moved by more than the threshold.
        public var eta: JSONValue?
        /// The new pickup (else dropoff) ETA in seconds, when it moved enough to push.
        public var pushETASeconds: Int?
        /// The ETA for the trip's Live Activities, when its whole minutes changed.
        public var activityETA: (minutes: Int, kind: String)?
    }

    /// Judges a sample the driver index accepted; nil when the driver is on no trip here.
    public func judge(driverID: String, update: LocationUpdate, at now: Int64) -> Judgement? {
        let rules = config.location
        return state.withLock { drivers -> Judgement? in
            guard var driver = drivers[driverID], var tracked = driver.tracked, tracked.trip.state.isActive else { return nil }
            var warnings = tracked.fraud.check(
                update.point, accuracyMeters: update.accuracyMeters, mockLocation: update.isMockLocation == true,
                integrityFailed: update.deviceIntegrity == .failed, at: now)
            if tracked.trip.state == .inProgress, let deviation = tracked.deviation.check(update.point) { warnings.append(deviation) }
            if let speed = update.speedMps {
                tracked.eta.observe(speedMps: speed)
            } else if let last = tracked.lastSample, now - last.at >= 1000 {
                tracked.eta.observe(speedMps: Haversine.distanceMeters(last.point, update.point) / (Double(now - last.at) / 1000))
            }
            tracked.lastSample = (update.point, now)
            tracked.ordinal = max(tracked.ordinal + 1, now * 1000)
            let shared = LocationFraudCheck.shareable(warnings) && (update.accuracyMeters ?? 0) <= rules.broadcastMaxAccuracyMeters
            var judgement = Judgement(
                trip: tracked.trip,
                row: TripLocationRow(
                    tripID: tracked.trip.id, receivedAt: now, ordinal: tracked.ordinal, sequence: update.sequence, latitude: update.point.latitude,
                    longitude: update.point.longitude, accuracyM: update.accuracyMeters, heading: update.heading, speedMps: update.speedMps,
                    altitudeM: update.altitudeMeters, batteryPercent: update.batteryPercent, isCharging: update.isCharging.map { $0 ? 1 : 0 },
                    clientAt: update.clientTime, shared: shared ? 1 : 0, warning: warnings.first?.code),
                warnings: warnings)
            if shared {
                // The hint animates over the time since the last shared sample (a dropped
                // sample makes it longer), within sensible bounds.
                let duration = tracked.lastShared.map { min(10_000, max(250, now - $0.at)) } ?? 2_000
                var payload: [String: JSONValue] = [
                    "latitude": .number(update.point.latitude), "longitude": .number(update.point.longitude),
                    "heading": TripJSON.number(update.heading), "speed_mps": TripJSON.number(update.speedMps),
                    "interpolation_hint": ["duration_ms": .number(Double(duration)), "easing": "linear"],
                    "server_timestamp": TripJSON.time(now),
                ]
                if let sequence = update.sequence, let last = tracked.lastShared?.sequence, sequence > last + 1 {
                    payload["samples_missed"] = .number(Double(sequence - last - 1))
                }
                judgement.location = .object(payload)
                tracked.lastShared = (now, update.sequence ?? tracked.lastShared?.sequence)
                let etas = tracked.eta.etas(
                    position: update.point, state: tracked.trip.state, pickup: tracked.trip.pickup, dropoff: tracked.trip.dropoff, staleSeconds: 0)
                let threshold = config.etaUpdateThresholdSeconds
                if tracked.sharedETA == nil || ETAEstimator.moved(tracked.sharedETA?.pickup, etas.pickup, threshold: threshold)
                    || ETAEstimator.moved(tracked.sharedETA?.dropoff, etas.dropoff, threshold: threshold)
                {
                    tracked.sharedETA = etas
                    // No routing engine: the route drawn is the straight segment to the next stop
                    // (pickup until the ride starts, then the dropoff).
                    let next = tracked.trip.state == .inProgress ? tracked.trip.dropoff : tracked.trip.pickup
                    judgement.eta = [
                        "pickup_eta": TripJSON.eta(etas.pickup, at: now), "dropoff_eta": TripJSON.eta(etas.dropoff, at: now),
                        "route_polyline": .string(Polyline.encode([update.point, next])),
                        "traffic_conditions": .string(tracked.eta.trafficConditions),
                    ]
                }
                if let (seconds, kind) = etas.pickup.map({ ($0.seconds, "pickup") }) ?? etas.dropoff.map({ ($0.seconds, "dropoff") }) {
                    let minutes = TripActivity.minutes(seconds: seconds)
                    if tracked.activityETA?.minutes != minutes || tracked.activityETA?.kind != kind {
                        tracked.activityETA = (minutes, kind)
                        judgement.activityETA = (minutes, kind)
                    }
                }
                let push = config.etaPushThresholdSeconds
                if let pushed = tracked.pushedETA {
                    let (old, new) = etas.pickup != nil ? (pushed.pickup, etas.pickup) : (pushed.dropoff, etas.dropoff)
                    if let old, let new, abs(old.seconds - new.seconds) > push {
                        judgement.pushETASeconds = new.seconds
                        tracked.pushedETA = etas
                    } else if old == nil {
                        tracked.pushedETA = etas
                    }
                } else {
                    tracked.pushedETA = etas
                }
            }
            driver.tracked = tracked
            drivers[driverID] = driver
            return judgement
        }
    }
}
