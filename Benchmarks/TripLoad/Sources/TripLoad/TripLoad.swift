import ArgumentParser
import Foundation
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#endif

/// Trip location ingest with fraud checks and broadcast to each trip's rider (issue 8).
///
/// Reads the trips the setup script made (one JSON object a line: trip_id, driver_token,
/// rider_token, lat, lng, seq), opens a native WebSocket for each driver and each rider,
/// subscribes every rider to `trip:{id}`, then runs the phases one after another on the same
/// sockets. Each phase: warm-up, a measurement window, then sending stops and what was sent
/// in the window is given `--drain` seconds to arrive. One JSON line per phase on stdout.
@main
struct TripLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "TripLoad", abstract: "Drivers stream locations over WebSocket; riders time the driver_location broadcast.")

    @Option(help: "Herald's base URL (http://host:port).") var url = "http://127.0.0.1:18181"
    @Option(help: "Trips made by Benchmarks/trips/setup_trips.py (JSON lines).") var tripsFile: String
    @Option(help: "Use the first N trips of the file (0: all).") var trips = 0
    @Option(help: "Label for the JSON lines (sqlite, postgres).") var engine = "sqlite"
    @Option(help: "Comma-separated phases: open:RATE (messages/s in all) or closed:WINDOW (samples in flight per trip).")
    var phases = "open:5000,open:10000,open:20000,open:30000,closed:1"
    @Option(help: "Seconds of each phase before the measurement window.") var warmup = 5.0
    @Option(help: "Seconds of the measurement window.") var duration = 15.0
    @Option(help: "Seconds to wait, after sending stops, for samples of the window to arrive.") var drain = 5.0
    @Option(help: "Seconds of quiet between phases.") var pause = 3.0
    @Option(help: "After the drain, wait up to this long for the server's backlog (every sample sent) to clear before the next phase.")
    var settleMax = 240.0
    @Option(help: "Event-loop threads of the generator.") var threads = 1
    @Option(help: "Sockets being opened at once, in all.") var connectConcurrency = 64
    @Option(help: "name=pid of a process whose CPU use (with its descendants') to report (repeatable).") var watch: [String] = []

    func run() async throws {
        let base = try parseURL(url)
        let endpoint = Endpoint(address: try SocketAddress(ipAddress: base.host, port: base.port), hostHeader: "\(base.host):\(base.port)")
        var specs = try String(contentsOfFile: tripsFile, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(TripSpec.self, from: Data($0.utf8))
        }
        if trips > 0 {
            guard specs.count >= trips else { throw BenchError("\(tripsFile) has \(specs.count) trips, \(trips) asked for") }
            specs = Array(specs.prefix(trips))
        }
        let modes = try phases.split(separator: ",").map(parsePhase)
        let watched =
            try watch.map { item -> (String, Int32) in
                let parts = item.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, let pid = Int32(parts[1]) else { throw BenchError("--watch takes name=pid: \(item)") }
                return (String(parts[0]), pid)
            } + [("generator", getpid())]

        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        let loops = Array(group.makeIterator())
        var states: [NIOLoopBound<LoopState>] = []
        for loop in loops { states.append(try await loop.submit { NIOLoopBound(LoopState(loop: loop), eventLoop: loop) }.get()) }
        let fleet = Fleet(loops: loops, states: states)

        // Connect: driver, then rider, then the rider's subscription, per trip.
        let connectStart = nowNanos()
        let perLoop = max(1, connectConcurrency / loops.count)
        let all = specs
        let results = try await fleet.onEvery { state, index in
            var mine: [Trip] = []
            for i in stride(from: index, to: all.count, by: loops.count) { mine.append(Trip(index: i, spec: all[i], state: state)) }
            state.trips = mine
            return Connector(loop: state.loop, trips: mine, endpoint: endpoint, concurrency: perLoop).run()
        }
        let failures = results.flatMap { $0 }
        let connectSeconds = Double(nowNanos() - connectStart) / 1e9
        note(
            "\(specs.count) trips: \(2 * specs.count) sockets open and riders subscribed in \(String(format: "%.1f", connectSeconds)) s, \(failures.count) failed"
        )
        emit(
            Out.obj([
                ("measurement", .str("trip_connect")), ("engine", .str(engine)), ("trips", .int(specs.count)), ("sockets", .int(2 * specs.count)),
                ("failed", .int(failures.count)), ("first_failure", failures.first.map(Out.str) ?? .null), ("seconds", .num(connectSeconds)),
            ]).text)
        guard failures.isEmpty else { throw BenchError("\(failures.count) trips failed to connect: \(failures.first!)") }

        for (n, mode) in modes.enumerated() {
            if n > 0 { try await Task.sleep(for: .seconds(pause)) }
            let start = nowNanos() + 50_000_000
            let windowStart = start + UInt64(warmup * 1e9)
            let windowEnd = windowStart + UInt64(duration * 1e9)
            var loopRate = 0.0
            if case .open(let rate) = mode { loopRate = rate / Double(loops.count) }
            let plan = PhasePlan(mode: mode, start: start, windowStart: windowStart, windowEnd: windowEnd, loopRate: loopRate)
            note("phase \(mode): \(warmup) s warm-up, \(duration) s measured")
            _ = try await fleet.onEvery { state, _ in state.loop.makeSucceededFuture(state.start(plan)) }
            try await sleep(until: windowStart)
            let cpuBefore = watched.map { treeCPUSeconds(root: $0.1) }
            try await sleep(until: windowEnd)
            let cpuAfter = watched.map { treeCPUSeconds(root: $0.1) }
            let load = loadAverage()
            let measured = Double(nowNanos() - windowStart) / 1e9
            _ = try await fleet.onEvery { state, _ in state.loop.makeSucceededFuture(state.stopSending()) }
            let drainStart = nowNanos()
            while Double(nowNanos() - drainStart) / 1e9 < drain {
                let left = try await fleet.onEvery { state, _ in state.loop.makeSucceededFuture(state.pendingInWindow) }.reduce(0, +)
                if left == 0 { break }
                try await Task.sleep(for: .milliseconds(50))
            }
            let drained = Double(nowNanos() - drainStart) / 1e9
            // The backlog: wait until every sample sent has reached its rider, or nothing
            // arrives for 15 s, so the next phase starts on an idle server.
            let settleStart = nowNanos()
            var lastDelivered = -1
            var lastProgress = nowNanos()
            var backlog = 0
            while Double(nowNanos() - settleStart) / 1e9 < settleMax {
                let counts = try await fleet.onEvery { state, _ in state.loop.makeSucceededFuture([state.pendingAll, state.locationsHeard]) }
                backlog = counts.reduce(0) { $0 + $1[0] }
                let delivered = counts.reduce(0) { $0 + $1[1] }
                if backlog == 0 { break }
                if delivered != lastDelivered {
                    lastDelivered = delivered
                    lastProgress = nowNanos()
                } else if nowNanos() - lastProgress > 15_000_000_000 {
                    break
                }
                try await Task.sleep(for: .milliseconds(100))
            }
            let settled = Double(nowNanos() - settleStart) / 1e9
            var stats = PhaseStats()
            for s in try await fleet.onEvery({ state, _ in state.loop.makeSucceededFuture(state.finish()) }) { stats.merge(s) }

            var fields: [(String, Out)] = [
                ("measurement", .str("trip_location_broadcast")), ("engine", .str(engine)), ("mode", .str(mode.description)),
                ("trips", .int(specs.count)),
            ]
            switch mode {
            case .open(let rate): fields += [("offered_per_s", .num(rate))]
            case .closed(let window): fields += [("offered_per_s", .null), ("window_per_trip", .int(window))]
            }
            fields += [
                ("window_s", .num(measured)),
                ("sent_per_s", .num(Double(stats.sentInWindow) / measured)),
                ("accepted_per_s", .num(Double(stats.acksOKInWindow) / measured)),
                ("delivered_per_s", .num(Double(stats.deliveredInWindow) / measured)),
                ("sent_in_window", .int(stats.sentInWindow)),
                ("lost_in_window", .int(stats.lostInWindow)),
                ("drain_s", .num(drained)),
                ("backlog_clear_s", .num(settled)),
                ("backlog_left", .int(backlog)),
            ]
            fields += stats.latency.fields("latency_")
            fields += stats.ackLatency.fields("ack_")
            if case .open = mode {
                fields += [("send_lag_p99_ms", .num(Double(stats.lag.percentile(99)) / 1000)), ("send_lag_max_ms", .num(Double(stats.lag.maximum) / 1000))]
            }
            fields += [
                ("acks_ok", .int(stats.acksOK)), ("acks_refused", .int(stats.acksRefused)), ("throttles", .int(stats.throttles)),
                ("errors", .int(stats.errors)), ("first_refusal", stats.firstRefusal.map(Out.str) ?? .null),
                ("eta_updates", .int(stats.etaUpdates)), ("other_messages", .int(stats.otherMessages)), ("unmatched", .int(stats.unmatched)),
                ("skipped", .int(stats.skipped)), ("stalls", .int(stats.stalls)), ("unexpected_closes", .int(stats.unexpectedCloses)),
            ]
            for (i, (name, _)) in watched.enumerated() {
                if let a = cpuBefore[i], let b = cpuAfter[i] { fields.append(("cpu_\(name)_pct", .num((b - a) / measured * 100))) }
            }
            fields.append(("loadavg_1m", load.map(Out.num) ?? .null))
            emit(Out.obj(fields).text)
            note(
                "\(mode): delivered \(Int(Double(stats.deliveredInWindow) / measured))/s, p50 \(Double(stats.latency.percentile(50)) / 1000) ms, p99 \(Double(stats.latency.percentile(99)) / 1000) ms, lost \(stats.lostInWindow), throttles \(stats.throttles)"
            )
        }

        _ = try await fleet.onEvery { state, _ in
            for trip in state.trips { trip.close() }
            return state.loop.makeSucceededFuture(())
        }
        try? await Task.sleep(for: .milliseconds(200))
        try? await group.shutdownGracefully()
    }

    private func sleep(until t: UInt64) async throws {
        let now = nowNanos()
        if t > now { try await Task.sleep(for: .nanoseconds(Int64(t - now))) }
    }

    private func parsePhase(_ text: Substring) throws -> LoadMode {
        let parts = text.split(separator: ":")
        guard parts.count == 2 else { throw BenchError("a phase is open:RATE or closed:WINDOW, not \(text)") }
        switch parts[0] {
        case "open":
            guard let rate = Double(parts[1]), rate > 0 else { throw BenchError("bad rate in \(text)") }
            return .open(rate: rate)
        case "closed":
            guard let window = Int(parts[1]), window > 0 else { throw BenchError("bad window in \(text)") }
            return .closed(window: window)
        default:
            throw BenchError("a phase is open:RATE or closed:WINDOW, not \(text)")
        }
    }

    private func parseURL(_ text: String) throws -> (host: String, port: Int) {
        guard text.hasPrefix("http://") else { throw BenchError("only http:// URLs: \(text)") }
        let authority = text.dropFirst("http://".count).prefix { $0 != "/" }
        guard let colon = authority.lastIndex(of: ":"), let port = Int(authority[authority.index(after: colon)...]) else {
            return (String(authority), 80)
        }
        return (String(authority[..<colon]), port)
    }
}

/// The loops and their states; the orchestration only submits closures to the loops.
final class Fleet: Sendable {
    let loops: [any EventLoop]
    let states: [NIOLoopBound<LoopState>]

    init(loops: [any EventLoop], states: [NIOLoopBound<LoopState>]) {
        self.loops = loops
        self.states = states
    }

    func onEvery<T: Sendable>(_ body: @escaping @Sendable (LoopState, Int) -> EventLoopFuture<T>) async throws -> [T] {
        var futures: [EventLoopFuture<T>] = []
        for (i, loop) in loops.enumerated() {
            let bound = states[i]
            futures.append(loop.flatSubmit { body(bound.value, i) })
        }
        var out: [T] = []
        for f in futures { out.append(try await f.get()) }
        return out
    }
}

/// Sets up one loop's trips, `concurrency` at a time; returns the failures' messages.
final class Connector {
    let loop: any EventLoop
    let trips: [Trip]
    let endpoint: Endpoint
    let concurrency: Int
    private var next = 0
    private var inFlight = 0
    private var failures: [String] = []
    private let promise: EventLoopPromise<[String]>

    init(loop: any EventLoop, trips: [Trip], endpoint: Endpoint, concurrency: Int) {
        self.loop = loop
        self.trips = trips
        self.endpoint = endpoint
        self.concurrency = concurrency
        promise = loop.makePromise()
    }

    func run() -> EventLoopFuture<[String]> {
        launch()
        return promise.futureResult
    }

    private func launch() {
        let bound = NIOLoopBound(self, eventLoop: loop)
        while inFlight < concurrency && next < trips.count {
            let trip = trips[next]
            next += 1
            inFlight += 1
            let index = trip.index
            trip.setUp(endpoint).whenComplete { result in
                let connector = bound.value
                connector.inFlight -= 1
                if case .failure(let error) = result { connector.failures.append("trip \(index): \(error)") }
                connector.launch()
            }
        }
        if inFlight == 0 && next >= trips.count { promise.succeed(failures) }
    }
}
