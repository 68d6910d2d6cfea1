import ArgumentParser
import Foundation
import NIOCore

/// Presence churn: users leave and come back while the rest stay connected.
struct Churn: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Presence churn: N clients connect; then `rate` of them per second disconnect and, `offline` seconds later, connect again (a fresh session: an app sent to the background and back). Reports the reconnects' CONNECT latency, cycles achieved and failed, and CPU."
    )

    @OptionGroup var client: ClientOptions

    @Option(help: "Clients to connect.")
    var connections = 10_000

    @Option(help: "Disconnections per second (each followed by a reconnect).")
    var rate: Double = 100

    @Option(help: "Seconds a client stays away before connecting again.")
    var offline: Double = 1

    @Option(help: "Seconds of churn.")
    var duration: Double = 20

    @Option(help: "Seconds to wait after connecting before churning.")
    var warmup: Double = 2

    func run() async throws {
        let config = try client.clientConfig()
        let probe = ServerProbe(pid: client.serverPID)
        let fleet = try Fleet(threads: client.threads, config: config)
        log("churn: connecting \(connections) clients to \(client.url)")
        let connect = try await fleet.connectNew(count: connections, offset: client.clientOffset, concurrency: client.connectConcurrency)
        log("churn: \(connect.connected) connected, \(connect.failed) failed in \(String(format: "%.1f", connect.seconds)) s")
        await sleepSeconds(warmup)
        let others = try ProcessProbes(client.probes)
        let othersBefore = others.cpu()
        let cpuBefore = probe.cpu
        let genCPUBefore = cpuSeconds(pid: getpid())
        let started = monotonicNanos()
        log("churn: \(rate) disconnections/s for \(duration) s, each client away \(offline) s")
        var issued = 0
        while true {
            let elapsed = Double(monotonicNanos() - started) / 1e9
            if elapsed >= duration { break }
            let due = Int(elapsed * rate) - issued
            if due > 0 {
                try await fleet.churn(count: due, offline: offline)
                issued += due
            }
            await sleepSeconds(0.005)
        }
        // The last ones come back `offline` seconds later; wait for them (at most 30 s more).
        let deadline = monotonicNanos() + UInt64((offline + 30) * 1e9)
        var tally = try await fleet.churnTally()
        while tally.pending > 0 && monotonicNanos() < deadline {
            await sleepSeconds(0.05)
            tally = try await fleet.churnTally()
        }
        let wall = Double(monotonicNanos() - started) / 1e9
        let cpuAfter = probe.cpu
        let othersAfter = others.cpu()
        let genCPUAfter = cpuSeconds(pid: getpid())
        let snap = try await fleet.snapshot()
        var out: [(String, JSON)] = [("test", .string("churn"))] + client.header
        out += [
            ("connections", .int(connections)),
            ("connected", .int(connect.connected)),
            ("connect_failed", .int(connect.failed)),
            ("rate", .double(rate)),
            ("offline_s", .double(offline)),
            ("duration_s", .double(duration)),
            ("window_s", .double(wall)),
            ("disconnections", .int(tally.started)),
            ("skipped_still_away", .int(tally.skipped)),
            ("reconnected", .int(tally.reconnected)),
            ("reconnect_failed", .int(tally.failed)),
            ("reconnect_pending_at_end", .int(tally.pending)),
            ("cycles_per_s", .double(Double(tally.reconnected) / wall)),
            ("unexpected_closes", .int(snap.unexpectedCloses)),
            ("still_connected", .int(snap.connected)),
            ("connect_failures", .object(snap.connectFailures.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
        ]
        out += snap.reconnectLatency.summaryMs(prefix: "reconnect_")
        if let cpuBefore, let cpuAfter {
            out.append(("server_cpu_s", .double(cpuAfter - cpuBefore)))
            out.append(("server_cpu_util", .double((cpuAfter - cpuBefore) / wall)))
        }
        if let genCPUBefore, let genCPUAfter {
            out.append(("generator_cpu_util", .double((genCPUAfter - genCPUBefore) / wall)))
        }
        out += others.fields(before: othersBefore, after: othersAfter)
        try await fleet.closeAll()
        emit(out)
        await fleet.shutdown()
    }
}

/// What a loop's churn did so far.
struct ChurnTally: Sendable {
    var started = 0
    var skipped = 0
    var reconnected = 0
    var failed = 0
    var pending: Int { started - reconnected - failed }

    static func + (a: ChurnTally, b: ChurnTally) -> ChurnTally {
        ChurnTally(started: a.started + b.started, skipped: a.skipped + b.skipped, reconnected: a.reconnected + b.reconnected, failed: a.failed + b.failed)
    }
}

extension Fleet {
    /// Disconnects the next `count` connected sessions (in turn, spread over the loops) and
    /// connects each again `offline` seconds later, recording the reconnect's start to its
    /// `40` reply as its latency. A session still away is skipped.
    func churn(count: Int, offline: Double) async throws {
        let n = loops.count
        let away = TimeAmount.nanoseconds(Int64(offline * 1e9))
        _ = try await onEveryLoop { stats, loop in
            let index = self.loops.firstIndex { $0 === loop } ?? 0
            var share = count / n + (index < count % n ? 1 : 0)
            var looked = 0
            while share > 0 && looked < stats.sessions.count {
                let session = stats.sessions[stats.churnCursor % stats.sessions.count]
                stats.churnCursor += 1
                looked += 1
                guard session.phase == .connected else {
                    stats.churnTally.skipped += 1
                    continue
                }
                share -= 1
                stats.churnTally.started += 1
                session.closeOnPurpose()
                let bound = NIOLoopBound((session, stats), eventLoop: loop)
                loop.scheduleTask(in: away) {
                    let session = bound.value.0
                    let start = monotonicNanos()
                    session.connect(recover: false).whenComplete { result in
                        let stats = bound.value.1
                        switch result {
                        case .success:
                            stats.churnTally.reconnected += 1
                            stats.reconnectLatency.record((monotonicNanos() &- start) / 1000)
                        case .failure:
                            stats.churnTally.failed += 1
                        }
                    }
                }
            }
            return loop.makeSucceededFuture(())
        }
    }

    func churnTally() async throws -> ChurnTally {
        try await onEveryLoop { stats, loop in loop.makeSucceededFuture(stats.churnTally) }.reduce(ChurnTally(), +)
    }
}
