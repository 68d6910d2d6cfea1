import Foundation
import NIOCore
import NIOPosix

/// The simulated clients of one process, spread over the event loops of one group. Each
/// loop owns its `LoopStats` and sessions; the orchestration only ever submits closures to
/// the loops and reads back plain value snapshots.
final class Fleet: Sendable {
    let group: MultiThreadedEventLoopGroup
    let loops: [any EventLoop]
    /// The publisher's own loop thread (on the same CPUs as the rest of the generator): on a
    /// client loop, its requests and ticks would wait behind every read of thousands of
    /// sockets, and the publisher, not the server, would set the rate that gets in.
    private let publisherGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    var publisherLoop: any EventLoop { publisherGroup.next() }
    private let stats: [NIOLoopBound<LoopStats>]
    let config: ClientConfig

    init(threads: Int, config: ClientConfig) throws {
        group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        loops = Array(group.makeIterator())
        self.config = config
        var bounds: [NIOLoopBound<LoopStats>] = []
        for loop in loops {
            bounds.append(try loop.submit { NIOLoopBound(LoopStats(), eventLoop: loop) }.wait())
        }
        stats = bounds
    }

    func shutdown() async {
        try? await group.shutdownGracefully()
        try? await publisherGroup.shutdownGracefully()
    }

    /// Runs `body` on every loop with that loop's stats, and returns the results in loop order.
    func onEveryLoop<T: Sendable>(_ body: @escaping @Sendable (LoopStats, any EventLoop) -> EventLoopFuture<T>) async throws -> [T] {
        var futures: [EventLoopFuture<T>] = []
        for (i, loop) in loops.enumerated() {
            let bound = stats[i]
            futures.append(loop.flatSubmit { body(bound.value, loop) })
        }
        var out: [T] = []
        for f in futures { out.append(try await f.get()) }
        return out
    }

    func snapshot() async throws -> LoopSnapshot {
        LoopSnapshot.merge(try await onEveryLoop { stats, loop in loop.makeSucceededFuture(stats.snapshot()) })
    }

    /// Creates `count` sessions (global indices `offset..<offset+count`, round-robin over the
    /// loops) and connects them, at most `concurrency` attempts in flight in all.
    func connectNew(count: Int, offset: Int = 0, concurrency: Int) async throws -> (connected: Int, failed: Int, seconds: Double) {
        let started = monotonicNanos()
        let config = self.config
        let n = loops.count
        let perLoopConcurrency = max(1, concurrency / n)
        let progress = ProgressTicker(label: "connect", total: count, fleet: self)
        let results = try await onEveryLoop { stats, loop in
            var sessions: [ClientSession] = []
            let loopIndex = self.loops.firstIndex { $0 === loop } ?? 0
            var i = loopIndex
            while i < count {
                let session = ClientSession(index: offset + i, loop: loop, stats: stats, config: config)
                sessions.append(session)
                stats.sessions.append(session)
                i += n
            }
            return Connector(loop: loop, sessions: sessions, concurrency: perLoopConcurrency, recover: false, target: 0).run()
        }
        progress.stop()
        let connected = results.reduce(0) { $0 + $1.0 }
        let failed = results.reduce(0) { $0 + $1.1 }
        return (connected, failed, Double(monotonicNanos() - started) / 1e9)
    }

    /// The storm: closes every session's connection at once, then reconnects all of them with
    /// recovery auth ({pid, offset}), at most `concurrency` attempts in flight in all.
    func dropAndReconnect(concurrency: Int, target: Int) async throws -> (connected: Int, failed: Int, seconds: Double) {
        let started = monotonicNanos()
        let n = loops.count
        let perLoopConcurrency = max(1, concurrency / n)
        let results = try await onEveryLoop { stats, loop in
            let sessions = stats.sessions.filter { $0.phase == .connected }
            for session in sessions {
                session.sidBeforeDrop = session.sid
                session.maxSeqAtDrop = session.seqs.prefix
                session.offsetAtDrop = session.offset
                session.closeOnPurpose()
            }
            return Connector(loop: loop, sessions: sessions, concurrency: perLoopConcurrency, recover: true, target: target).run()
        }
        let connected = results.reduce(0) { $0 + $1.0 }
        let failed = results.reduce(0) { $0 + $1.1 }
        return (connected, failed, Double(monotonicNanos() - started) / 1e9)
    }

    func closeAll() async throws {
        _ = try await onEveryLoop { stats, loop in
            for session in stats.sessions { session.closeOnPurpose() }
            return loop.makeSucceededFuture(())
        }
    }

    /// Number of sessions currently connected.
    func connectedCount() async throws -> Int {
        try await onEveryLoop { stats, loop in
            loop.makeSucceededFuture(stats.sessions.reduce(0) { $0 + ($1.phase == .connected ? 1 : 0) })
        }.reduce(0, +)
    }
}

/// Connects a list of sessions of one loop, keeping `concurrency` attempts in flight.
final class Connector {
    let loop: any EventLoop
    let sessions: [ClientSession]
    let concurrency: Int
    let recover: Bool
    let target: Int
    private var next = 0
    private var inFlight = 0
    private var connected = 0
    private var failed = 0
    private let promise: EventLoopPromise<(Int, Int)>

    init(loop: any EventLoop, sessions: [ClientSession], concurrency: Int, recover: Bool, target: Int) {
        self.loop = loop
        self.sessions = sessions
        self.concurrency = concurrency
        self.recover = recover
        self.target = target
        promise = loop.makePromise()
    }

    func run() -> EventLoopFuture<(Int, Int)> {
        launch()
        return promise.futureResult
    }

    private func launch() {
        let bound = NIOLoopBound(self, eventLoop: loop)
        while inFlight < concurrency && next < sessions.count {
            let session = sessions[next]
            next += 1
            inFlight += 1
            if recover {
                session.reconnectStart = monotonicNanos()
                session.trackCatchUp = true
                session.catchUpTarget = 0
                session.caughtUp = false
                session.sidKept = nil
                session.whoamiRecovered = nil
            }
            session.connect(recover: recover).whenComplete { result in
                let connector = bound.value
                connector.inFlight -= 1
                if case .success = result { connector.connected += 1 } else { connector.failed += 1 }
                connector.launch()
            }
        }
        if inFlight == 0 && next >= sessions.count {
            promise.succeed((connected, failed))
        }
    }
}

/// Logs how many clients are connected every few seconds while a phase runs.
final class ProgressTicker: Sendable {
    private let task: Task<Void, Never>

    init(label: String, total: Int, fleet: Fleet) {
        task = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(5))
                if Task.isCancelled { break }
                if let n = try? await fleet.connectedCount() { log("\(label): \(n)/\(total) connected") }
            }
        }
    }

    func stop() { task.cancel() }
}

/// CPU time (user + system) of a process, in seconds, from /proc/PID/stat.
func cpuSeconds(pid: Int32) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return nil }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // After the command: state(0) ppid(1) … utime(11) stime(12).
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// CPU seconds of a process and every process under it, with the children they waited for
/// (PostgreSQL's backends are the postmaster's children; nginx- or uvicorn-style workers too).
func cpuSecondsOfTree(pid root: Int32) -> Double? {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return nil }
    var parent: [Int32: Int32] = [:]
    var ticks: [Int32: Double] = [:]
    for name in entries {
        guard let pid = Int32(name), let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { continue }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After the command: state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
        guard fields.count > 14, let ppid = Int32(fields[1]) else { continue }
        parent[pid] = ppid
        ticks[pid] = [11, 12, 13, 14].reduce(0.0) { $0 + (Double(fields[$1]) ?? 0) }
    }
    guard ticks[root] != nil else { return nil }
    var total = 0.0
    for (pid, value) in ticks {
        var current = pid
        var depth = 0
        while current > 1 && depth < 64 {
            if current == root {
                total += value
                break
            }
            current = parent[current] ?? 0
            depth += 1
        }
    }
    return total / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// Other processes whose CPU a measurement reports (`--probe name=pid`): a second node, the
/// database, Redis.
struct ProcessProbes {
    let named: [(name: String, pid: Int32)]

    init(_ specs: [String]) throws {
        named = try specs.map { spec in
            let parts = spec.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let pid = Int32(parts[1]), !parts[0].isEmpty else { throw ProbeSpecError(spec: spec) }
            return (String(parts[0]), pid)
        }
    }

    func cpu() -> [String: Double] {
        Dictionary(uniqueKeysWithValues: named.compactMap { probe in cpuSecondsOfTree(pid: probe.pid).map { (probe.name, $0) } })
    }

    /// `<name>_cpu_s` for each probe: the CPU seconds spent between `before` and `after`.
    func fields(before: [String: Double], after: [String: Double]) -> [(String, JSON)] {
        named.compactMap { probe in
            guard let start = before[probe.name], let end = after[probe.name] else { return nil }
            return ("\(probe.name)_cpu_s", .double(end - start))
        }
    }
}

struct ProbeSpecError: Error, CustomStringConvertible {
    let spec: String
    var description: String { "--probe wants name=pid, got \(spec)" }
}
