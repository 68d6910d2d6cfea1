import Foundation
import NIOCore
import NIOPosix

/// One trip made by the setup script: its driver's and rider's tokens and where the driver is.
struct TripSpec: Decodable, Sendable {
    var trip_id: String
    var driver_token: String
    var rider_token: String
    /// The driver's last reported position (setup) and the sequence it used.
    var lat: Double
    var lng: Double
    var seq: Int
}

/// How a phase drives the load.
enum LoadMode: Sendable, CustomStringConvertible {
    /// Open loop: this many location messages per second in all, round-robin over the trips,
    /// whatever the server answers.
    case open(rate: Double)
    /// Closed loop: every trip keeps `window` samples on their way to its rider and sends the
    /// next one when the rider gets one (the saturating run).
    case closed(window: Int)

    var description: String {
        switch self {
        case .open(let rate): "open:\(Int(rate))"
        case .closed(let window): "closed:\(window)"
        }
    }
}

struct PhasePlan: Sendable {
    var mode: LoadMode
    var start: UInt64
    var windowStart: UInt64
    var windowEnd: UInt64
    /// Open loop: this loop's share of the rate.
    var loopRate: Double
}

/// Counters of one loop over one phase ("in window": inside the measurement window).
struct PhaseStats: Sendable {
    var sent = 0
    var sentInWindow = 0
    var acksOK = 0
    var acksOKInWindow = 0
    var acksRefused = 0
    var throttles = 0
    var errors = 0
    var firstRefusal: String?
    var delivered = 0
    var deliveredInWindow = 0
    /// Driver frame written → the rider's `driver_location` for that sample (samples sent in the window).
    var latency = LatencyHistogram()
    /// Driver frame written → the driver's `location_result`.
    var ackLatency = LatencyHistogram()
    /// Open loop: actual send time − scheduled send time.
    var lag = LatencyHistogram()
    var etaUpdates = 0
    var otherMessages = 0
    var unmatched = 0
    var skipped = 0
    var lostInWindow = 0
    var unexpectedCloses = 0
    var stalls = 0

    mutating func merge(_ o: PhaseStats) {
        sent += o.sent
        sentInWindow += o.sentInWindow
        acksOK += o.acksOK
        acksOKInWindow += o.acksOKInWindow
        acksRefused += o.acksRefused
        throttles += o.throttles
        errors += o.errors
        firstRefusal = firstRefusal ?? o.firstRefusal
        delivered += o.delivered
        deliveredInWindow += o.deliveredInWindow
        latency.merge(o.latency)
        ackLatency.merge(o.ackLatency)
        lag.merge(o.lag)
        etaUpdates += o.etaUpdates
        otherMessages += o.otherMessages
        unmatched += o.unmatched
        skipped += o.skipped
        lostInWindow += o.lostInWindow
        unexpectedCloses += o.unexpectedCloses
        stalls += o.stalls
    }
}

/// The trips of one event loop and their counters; touched only on that loop.
final class LoopState {
    let loop: any EventLoop
    var trips: [Trip] = []
    var stats = PhaseStats()
    var plan: PhasePlan?
    var sending = false
    private var ticker: RepeatedTask?
    private var sentInPhase = 0
    private var cursor = 0

    init(loop: any EventLoop) {
        self.loop = loop
    }

    @inline(__always)
    func inWindow(_ t: UInt64) -> Bool {
        guard let plan else { return false }
        return t >= plan.windowStart && t < plan.windowEnd
    }

    func start(_ plan: PhasePlan) {
        stats = PhaseStats()
        self.plan = plan
        sending = true
        sentInPhase = 0
        let bound = NIOLoopBound(self, eventLoop: loop)
        switch plan.mode {
        case .open:
            ticker = loop.scheduleRepeatedTask(initialDelay: .zero, delay: .milliseconds(1)) { _ in bound.value.openTick() }
        case .closed(let window):
            let wait = plan.start > nowNanos() ? TimeAmount.nanoseconds(Int64(plan.start - nowNanos())) : .zero
            loop.scheduleTask(in: wait) {
                let state = bound.value
                let now = nowNanos()
                for trip in state.trips {
                    trip.lastProgress = now
                    for _ in 0..<window { state.send(trip) }
                }
            }
            ticker = loop.scheduleRepeatedTask(initialDelay: .milliseconds(500), delay: .milliseconds(500)) { _ in bound.value.stallCheck() }
        }
    }

    /// Open loop: sends whatever the schedule says is due by now.
    private func openTick() {
        guard sending, let plan, !trips.isEmpty else { return }
        let now = nowNanos()
        guard now > plan.start else { return }
        let due = Int(Double(now - plan.start) / 1e9 * plan.loopRate)
        while sentInPhase < due {
            let scheduled = plan.start + UInt64(Double(sentInPhase) / plan.loopRate * 1e9)
            let trip = trips[cursor]
            cursor = (cursor + 1) % trips.count
            let t = send(trip)
            if inWindow(t) { stats.lag.record(t > scheduled ? (t - scheduled) / 1000 : 0) }
            sentInPhase += 1
        }
    }

    @discardableResult
    func send(_ trip: Trip) -> UInt64 {
        let t = nowNanos()
        let counted = inWindow(t)
        trip.sendLocation(at: t, inWindow: counted)
        stats.sent += 1
        if counted { stats.sentInWindow += 1 }
        return t
    }

    /// Closed loop: the trip's sample reached the rider (or was refused): send the next.
    func advance(_ trip: Trip, at now: UInt64) {
        guard case .closed(let window)? = plan?.mode else { return }
        trip.outstanding = max(0, trip.outstanding - 1)
        trip.lastProgress = now
        guard sending else { return }
        while trip.outstanding < window { send(trip) }
    }

    /// Closed loop: a trip whose rider heard nothing for 10 s gives its samples in flight up
    /// as lost and starts again (a sample that was never shared would stop it for good).
    private func stallCheck() {
        guard sending, case .closed(let window)? = plan?.mode else { return }
        let now = nowNanos()
        for trip in trips where now - trip.lastProgress > 10_000_000_000 {
            stats.stalls += 1
            stats.lostInWindow += trip.reset()
            trip.lastProgress = now
            while trip.outstanding < window { send(trip) }
        }
    }

    func stopSending() {
        sending = false
        ticker?.cancel()
        ticker = nil
    }

    var pendingInWindow: Int { trips.reduce(0) { $0 + $1.pendingInWindow } }
    /// Every sample sent and not yet seen by its rider (the server's backlog, from here).
    var pendingAll: Int { trips.reduce(0) { $0 + $1.pendingCount } }
    /// Every `driver_location` heard this phase, matched or not (progress of the backlog).
    var locationsHeard: Int { stats.delivered + stats.unmatched }

    /// Ends the phase: whatever was sent in the window and not received is lost.
    func finish() -> PhaseStats {
        for trip in trips { stats.lostInWindow += trip.reset() }
        plan = nil
        let out = stats
        stats = PhaseStats()
        return out
    }
}

/// A sample on its way: where it said the driver was and when it was written.
struct Sample {
    var lat: Double
    var lng: Double
    var sentAt: UInt64
    var inWindow: Bool
}

/// One trip: its driver's socket (sends `location`), its rider's socket (subscribed to
/// `trip:{id}`), and the samples sent and not yet seen by the rider, in order.
final class Trip {
    let index: Int
    let spec: TripSpec
    let state: LoopState
    let driver: WSConnection
    let rider: WSConnection
    var sequence: Int
    private var step = 0
    private var pending = Fifo<Sample>()
    private(set) var pendingInWindow = 0
    var pendingCount: Int { pending.count }
    private var ackTimes = Fifo<UInt64>()
    var outstanding = 0
    var lastProgress: UInt64 = 0
    private var driverReady: EventLoopPromise<Void>?
    private var riderReady: EventLoopPromise<Void>?
    private var subscribed: EventLoopPromise<Void>?

    /// Metres per sample, and samples per leg of the back-and-forth (1 km).
    static let stepMeters = 10.0
    static let legSteps = 100
    /// Every frame received goes to stderr (TRIP_LOAD_DEBUG=1; a handful of trips only).
    nonisolated(unsafe) static var debug = ProcessInfo.processInfo.environment["TRIP_LOAD_DEBUG"] == "1"

    init(index: Int, spec: TripSpec, state: LoopState) {
        self.index = index
        self.spec = spec
        self.state = state
        driver = WSConnection(loop: state.loop)
        rider = WSConnection(loop: state.loop)
        // Past any sequence an earlier run against the same server used (the server keeps
        // the last one per driver and answers stale_sequence to anything not above it).
        sequence = max(spec.seq, Int(Date().timeIntervalSince1970 * 1000))
    }

    /// Driver socket (waits for `connected`), rider socket (`connected`), rider subscribes.
    func setUp(_ endpoint: Endpoint) -> EventLoopFuture<Void> {
        let loop = state.loop
        let bound = NIOLoopBound(self, eventLoop: loop)
        driver.onText = { bytes, now in bound.value.driverText(bytes, now) }
        rider.onText = { bytes, now in bound.value.riderText(bytes, now) }
        driver.onClose = { bound.value.state.stats.unexpectedCloses += 1 }
        rider.onClose = { bound.value.state.stats.unexpectedCloses += 1 }
        let driverReady = loop.makePromise(of: Void.self)
        let riderReady = loop.makePromise(of: Void.self)
        let subscribed = loop.makePromise(of: Void.self)
        self.driverReady = driverReady
        self.riderReady = riderReady
        self.subscribed = subscribed
        let timeout = loop.scheduleTask(in: .seconds(60)) {
            let trip = bound.value
            let error = BenchError("trip \(trip.index): no connected/subscribed within 60 s")
            trip.driverReady?.fail(error)
            trip.riderReady?.fail(error)
            trip.subscribed?.fail(error)
        }
        let channel = "trip:\(spec.trip_id)"
        return driver.connect(endpoint, uri: "/api/v1/realtime?token=\(spec.driver_token)")
            .flatMap { driverReady.futureResult }
            .flatMap { bound.value.rider.connect(endpoint, uri: "/api/v1/realtime?token=\(bound.value.spec.rider_token)") }
            .flatMap { riderReady.futureResult }
            .flatMap {
                bound.value.rider.send("{\"type\":\"subscribe\",\"channel\":\(Out.quote(channel))}")
                return subscribed.futureResult
            }
            .always { _ in timeout.cancel() }
    }

    /// Back and forth over 1 km along the meridian, 10 m a sample (no fraud rule fires).
    func sendLocation(at t: UInt64, inWindow: Bool) {
        sequence += 1
        step += 1
        let phase = step % (2 * Self.legSteps)
        let south = phase <= Self.legSteps ? phase : 2 * Self.legSteps - phase
        let heading = phase < Self.legSteps ? 180 : 0
        let lat = spec.lat - Double(south) * Self.stepMeters / 111_200
        // The longitude carries a tag (at most 9 m east, 0.1 mm a step) so that every sample
        // of a trip has its own position: a late sample of an earlier phase cannot pass for one
        // of this phase, whose latitudes repeat every 2 km of back and forth.
        let lng = spec.lng + Double(sequence % 100_000) * 1e-9
        driver.send(
            "{\"type\":\"location\",\"sequence\":\(sequence),\"payload\":{\"latitude\":\(lat),\"longitude\":\(lng),\"accuracy_meters\":5,\"heading\":\(heading),\"speed_mps\":10}}"
        )
        pending.push(Sample(lat: lat, lng: lng, sentAt: t, inWindow: inWindow))
        if inWindow { pendingInWindow += 1 }
        ackTimes.push(t)
        outstanding += 1
    }

    private func driverText(_ bytes: UnsafeRawBufferPointer, _ now: UInt64) {
        if Trip.debug { note("\(nowNanos() / 1_000_000) driver \(index): \(Scan.text(bytes, limit: 300))") }
        let stats = state
        if Scan.contains(bytes, "\"type\":\"location_result\"") {
            if let sent = ackTimes.pop(), stats.inWindow(sent) { stats.stats.ackLatency.record((now &- sent) / 1000) }
            if Scan.contains(bytes, "\"accepted\":true") {
                stats.stats.acksOK += 1
                if stats.inWindow(now) { stats.stats.acksOKInWindow += 1 }
            } else {
                stats.stats.acksRefused += 1
                refused(bytes, now)
            }
        } else if Scan.contains(bytes, "\"type\":\"throttle\"") {
            ackTimes.pop()
            stats.stats.throttles += 1
            refused(bytes, now)
        } else if Scan.contains(bytes, "\"type\":\"error\"") {
            ackTimes.pop()
            stats.stats.errors += 1
            refused(bytes, now)
        } else if let promise = driverReady, Scan.contains(bytes, "\"type\":\"connected\"") {
            driverReady = nil
            promise.succeed(())
        } else {
            stats.stats.otherMessages += 1
        }
    }

    private func refused(_ bytes: UnsafeRawBufferPointer, _ now: UInt64) {
        if state.stats.firstRefusal == nil { state.stats.firstRefusal = Scan.text(bytes) }
        state.advance(self, at: now)
    }

    private func riderText(_ bytes: UnsafeRawBufferPointer, _ now: UInt64) {
        if Trip.debug { note("\(nowNanos() / 1_000_000) rider \(index): \(Scan.text(bytes, limit: 300))") }
        let stats = state
        if Scan.hasPrefix(bytes, "{\"type\":\"driver_location\"") {
            guard let lat = Scan.number(after: "\"latitude\":", in: bytes), let lng = Scan.number(after: "\"longitude\":", in: bytes) else {
                stats.stats.unmatched += 1
                return
            }
            var match = -1
            for i in 0..<pending.count {
                let p = pending.peek(i)!
                if abs(p.lat - lat) < 1e-7 && abs(p.lng - lng) < 4e-10 {
                    match = i
                    break
                }
            }
            guard match >= 0 else {
                stats.stats.unmatched += 1
                return
            }
            for _ in 0..<match {
                let lost = pending.pop()!
                stats.stats.skipped += 1
                if lost.inWindow {
                    pendingInWindow -= 1
                    stats.stats.lostInWindow += 1
                }
            }
            let sample = pending.pop()!
            stats.stats.delivered += 1
            if stats.inWindow(now) { stats.stats.deliveredInWindow += 1 }
            if sample.inWindow {
                pendingInWindow -= 1
                stats.stats.latency.record((now &- sample.sentAt) / 1000)
            }
            stats.advance(self, at: now)
        } else if Scan.hasPrefix(bytes, "{\"type\":\"eta_update\"") {
            stats.stats.etaUpdates += 1
        } else if let promise = subscribed, Scan.contains(bytes, "\"type\":\"subscribed\"") {
            subscribed = nil
            promise.succeed(())
        } else if let promise = riderReady, Scan.contains(bytes, "\"type\":\"connected\"") {
            riderReady = nil
            promise.succeed(())
        } else if let promise = subscribed, riderReady == nil, Scan.contains(bytes, "\"type\":\"error\"") {
            subscribed = nil
            promise.fail(BenchError("subscribe refused: \(Scan.text(bytes))"))
        } else {
            stats.stats.otherMessages += 1
        }
    }

    /// Forgets samples still on their way; returns how many were sent in the window.
    func reset() -> Int {
        let lost = pendingInWindow
        pending.removeAll()
        ackTimes.removeAll()
        pendingInWindow = 0
        outstanding = 0
        return lost
    }

    func close() {
        driver.close()
        rider.close()
    }
}
