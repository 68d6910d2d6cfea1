import ArgumentParser
import Crypto
import Foundation
import HeraldCore
import HeraldNotifications
import HeraldPush
import HeraldStorage
import Logging
import Synchronization

/// `live-activities`: N trip Live Activities, each fed one driver position a second, through
/// Herald's own path (`LiveActivityService.publish` per position, `LiveActivityWorker`
/// coalescing and sending to a mock APNs), on a fresh SQLite database.
///
/// Two feeds: `minutes` publishes what the trips module publishes (the ETA in whole minutes,
/// only when it changes); `every` makes every position a content change (an ETA in seconds),
/// the worst case for the coalescing. The figures: positions offered and published per
/// second, pushes sent per second, and the process's CPU per position. Compare with
/// `queue-rss` in the same run: an ordinary push each, through the outbox.
struct LiveActivityLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "live-activities", abstract: "Trip Live Activities fed one position a second each.")

    @Option(help: "The mock's base URL.") var url: String
    @Option(help: "PEM of the mock's certificate.") var ca: String
    @Option var activities = 10_000
    @Option var seconds = 60
    @Option(help: "minutes (what Herald publishes) or every (each position changes the content).") var feed = "minutes"
    @Option(help: "notifications.live_activities.routine_interval_seconds.") var interval = 30
    @Option(help: "Positions published at once.") var publishers = 8
    @Option(help: "APNs HTTP/2 connections.") var connections = 2

    /// What the publishing lanes share: each trip's last minutes published, and the count.
    final class FeedState: Sendable {
        let lastMinutes: Mutex<[Int]>
        let published = Atomic<Int>(0)
        init(count: Int) { lastMinutes = Mutex([Int](repeating: -1, count: count)) }
    }

    /// Every trip is a subject the bench source knows.
    struct Source: LiveActivitySource {
        func snapshot(subjectID: String, userID: String) async throws -> LiveActivitySnapshot? {
            LiveActivitySnapshot(content: ["trip_id": .string(subjectID), "state": "ACCEPTED", "driver_name": "Alex", "eta_minutes": .null], ended: false)
        }
    }

    func run() async throws {
        var logger = Logger(label: "pushload")
        logger.logLevel = .warning
        let bench = try await BenchDatabase.notifications("la", logger: logger)
        defer { bench.remove() }
        let database = bench.database
        var config = LiveActivitiesConfig()
        config.routineIntervalSeconds = interval
        config.maxPerUser = 1000
        let service = LiveActivityService(database: database, config: config, clock: SystemClock(), logger: logger)
        service.setSource(Source(), for: .trip)
        let count = activities
        let setupStart = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in 0..<8 {
                group.addTask {
                    for i in stride(from: lane, to: count, by: 8) {
                        _ = try await service.register(
                            userID: "rider_\(i)",
                            body: ["activity_id": .string("act_\(i)"), "kind": "trip", "subject_id": .string("tr_\(i)"), "push_token": .string(deviceToken(i))])
                    }
                }
            }
            try await group.waitForAll()
        }
        progress("live-activities: \(count) registered in \(String(format: "%.1f", Double((ContinuousClock.now - setupStart) / .milliseconds(1)) / 1000)) s")

        let (apnsSender, client) = try await mockAPNsSender(url: url, ca: ca, connections: connections)
        let sender = apnsSender
        let worker = LiveActivityWorker(
            service: service, database: database, senders: PushSenders(byProvider: [.apns: sender], fallback: nil), clock: SystemClock(), logger: logger)
        let workerTask = Task { try await worker.run() }

        // Each trip's ETA counts down a second a second from its own start (10 to 30 minutes).
        let every = feed == "every"
        let state = FeedState(count: count)
        let cpu0 = processCPUMicros()
        let start = ContinuousClock.now
        var behind = 0
        let end = start + .seconds(seconds)
        for second in 0..<seconds {
            let due = start + .seconds(second)
            // Open loop: a second's positions start on time; ones not published by the end
            // of the run are not (what a node cannot take shows as published_per_s).
            if ContinuousClock.now < due { try await Task.sleep(until: due) } else if second > 0 { behind += 1 }
            if ContinuousClock.now >= end { break }
            let lanes = publishers
            await withTaskGroup(of: Void.self) { group in
                for lane in 0..<lanes {
                    group.addTask {
                        for i in stride(from: lane, to: count, by: lanes) {
                            if ContinuousClock.now >= end { return }
                            let eta = 600 + (i * 7919) % 1200 - second
                            let patch: [String: JSONValue]
                            if every {
                                patch = ["eta_seconds": .number(Double(eta))]
                            } else {
                                let minutes = max(1, (eta + 59) / 60)
                                let changed = state.lastMinutes.withLock { last in
                                    defer { last[i] = minutes }
                                    return last[i] != minutes
                                }
                                guard changed else { continue }
                                patch = ["eta_minutes": .number(Double(minutes)), "eta_kind": "pickup"]
                            }
                            await service.publish(LiveActivityChange(kind: .trip, subjectID: "tr_\(i)", patch: patch))
                            state.published.add(1, ordering: .relaxed)
                        }
                    }
                }
            }
        }
        let loadSeconds = Double((ContinuousClock.now - start) / .microseconds(1)) / 1_000_000
        // The pushes still due within an interval go too: wait for the worker to catch up.
        try await Task.sleep(for: .seconds(interval + 2))
        let totalSeconds = Double((ContinuousClock.now - start) / .microseconds(1)) / 1_000_000
        let cpu = processCPUMicros() - cpu0
        workerTask.cancel()
        _ = try? await workerTask.value
        let stats = worker.statistics.snapshot
        let sent = stats.filter { $0.key.outcome == "sent" }.values.reduce(0, +)
        let failed = stats.filter { $0.key.outcome != "sent" }.values.reduce(0, +)
        await client.shutdown()
        await database.close()
        let positions = count * seconds
        emit([
            ("bench", .string("live-activities")), ("impl", .string("herald")), ("cpus", .string(allowedCPUs())), ("feed", .string(feed)),
            ("activities", .int(count)), ("seconds", .int(seconds)), ("routine_interval_s", .int(interval)), ("publishers", .int(publishers)),
            ("positions", .int(positions)), ("load_s", .double(loadSeconds)), ("seconds_behind", .int(behind)),
            ("positions_per_s", .double(Double(positions) / loadSeconds)), ("published", .int(state.published.load(ordering: .relaxed))),
            ("published_per_s", .double(Double(state.published.load(ordering: .relaxed)) / loadSeconds)), ("pushes_sent", .int(sent)),
            ("pushes_failed", .int(failed)), ("pushes_per_s", .double(Double(sent) / totalSeconds)),
            ("pushes_per_activity_minute", .double(Double(sent) / Double(count) / (totalSeconds / 60))),
            ("cpu_s", .double(cpu / 1_000_000)), ("cpu_us_per_position", .double(cpu / Double(positions))),
            ("cpu_us_per_push", .double(cpu / Double(max(1, sent)))),
        ])
    }
}
