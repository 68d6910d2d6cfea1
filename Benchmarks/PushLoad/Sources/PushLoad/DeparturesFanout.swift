import ArgumentParser
import Crypto
import Foundation
import HeraldCore
import HeraldNotifications
import HeraldPush
import HeraldStorage
import Logging

/// `departures-fanout`: R riders follow one stop's departures; each board change goes through
/// Herald's path (`LiveActivityService.publish`, `LiveActivityWorker`, the APNs client to a mock)
/// either to every rider's own activity token (`devices`: iOS 17, or an app without channels)
/// or once to the stop's broadcast channel (`channel`: iOS 18). The figures: pushes per
/// change, seconds from a change to its last push accepted, and the process's CPU per change.
struct DeparturesFanout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "departures-fanout", abstract: "One stop's board changes, to R riders' tokens or to one broadcast channel.")

    @Option(help: "The mock's base URL.") var url: String
    @Option(help: "PEM of the mock's certificate.") var ca: String
    @Option var riders = 20_000
    @Option var changes = 5
    @Option(help: "devices (one push per rider) or channel (one broadcast).") var mode = "channel"
    @Option(help: "APNs HTTP/2 connections.") var connections = 2

    struct Source: LiveActivitySource {
        func snapshot(subjectID: String, userID: String) async throws -> LiveActivitySnapshot? {
            LiveActivitySnapshot(content: ["stop_id": .string(subjectID), "departures": []], ended: false, attributes: ["stop_id": .string(subjectID)])
        }
    }

    /// The real APNs sender for pushes and broadcasts; the channel id is given, since the
    /// benchmark's mock answers every request 200 (it has no channel management API).
    struct GivenChannel: PushSender, LiveActivitySender, LiveActivityBroadcaster {
        let sender: APNsSender
        func send(_ message: PushMessage) async throws -> PushResult { try await sender.send(message) }
        func sendLiveActivity(_ message: LiveActivityMessage) async throws -> PushResult { try await sender.sendLiveActivity(message) }
        func createChannel(storage: LiveActivityChannelStorage) async -> Result<String, LiveActivityChannelFailure> { .success("YmVuY2htYXJrLWNoYW5uZWw=") }
        func deleteChannel(_ channelID: String) async -> Result<Void, LiveActivityChannelFailure> { .success(()) }
        func broadcast(_ message: LiveActivityMessage, storage: LiveActivityChannelStorage) async throws -> PushResult {
            try await sender.broadcast(message, storage: storage)
        }
    }

    func run() async throws {
        guard mode == "devices" || mode == "channel" else { throw ValidationError("--mode is devices or channel") }
        var logger = Logger(label: "pushload")
        logger.logLevel = .warning
        let bench = try await BenchDatabase.notifications("fanout", logger: logger)
        defer { bench.remove() }
        let database = bench.database
        let (apnsSender, client) = try await mockAPNsSender(url: url, ca: ca, connections: connections)
        let sender = GivenChannel(sender: apnsSender)
        let senders = PushSenders(byProvider: [.apns: sender], fallback: nil)
        var config = LiveActivitiesConfig()
        config.routineIntervalSeconds = 0
        let service = LiveActivityService(database: database, config: config, senders: senders, clock: SystemClock(), logger: logger)
        service.setSource(Source(), for: .departures)
        let count = riders
        if mode == "devices" {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for lane in 0..<8 {
                    group.addTask {
                        for i in stride(from: lane, to: count, by: 8) {
                            _ = try await service.register(
                                userID: "rider_\(i)",
                                body: ["activity_id": .string("dep_\(i)"), "kind": "departures", "subject_id": "S1", "push_token": .string(deviceToken(i))])
                        }
                    }
                }
                try await group.waitForAll()
            }
        } else {
            // Every rider asks for the channel; all get the one the first request made.
            for i in 0..<count { _ = try await service.channel(userID: "rider_\(i)", body: ["kind": "departures", "subject_id": "S1"]) }
        }
        progress("departures-fanout (\(mode)): \(count) riders follow S1")
        let worker = LiveActivityWorker(service: service, database: database, senders: senders, clock: SystemClock(), logger: logger)
        let workerTask = Task { try await worker.run() }
        let perChange = mode == "devices" ? count : 1
        func sent() -> Int { worker.statistics.snapshot.filter { $0.key.outcome == "sent" }.values.reduce(0, +) }
        let cpu0 = processCPUMicros()
        let start = ContinuousClock.now
        var latencies: [Double] = []
        for change in 0..<changes {
            let changed = ContinuousClock.now
            await service.publish(LiveActivityChange(kind: .departures, subjectID: "S1", patch: ["departures": [.number(Double(change))]]))
            while sent() < perChange * (change + 1) {
                try await Task.sleep(for: .milliseconds(1))
                if ContinuousClock.now - changed > .seconds(600) { throw ValidationError("change \(change) not sent in 10 minutes") }
                if worker.statistics.snapshot.contains(where: { $0.key.outcome == "failed" }) { throw ValidationError("APNs refused a push") }
            }
            latencies.append(Double((ContinuousClock.now - changed) / .microseconds(1)) / 1_000_000)
        }
        let seconds = Double((ContinuousClock.now - start) / .microseconds(1)) / 1_000_000
        let cpu = processCPUMicros() - cpu0
        workerTask.cancel()
        _ = try? await workerTask.value
        let total = sent()
        await client.shutdown()
        await database.close()
        emit([
            ("bench", .string("departures-fanout")), ("impl", .string("herald")), ("cpus", .string(allowedCPUs())), ("mode", .string(mode)),
            ("riders", .int(count)), ("changes", .int(changes)), ("pushes_sent", .int(total)), ("pushes_per_change", .double(Double(total) / Double(changes))),
            ("seconds", .double(seconds)), ("seconds_per_change_mean", .double(latencies.reduce(0, +) / Double(max(1, latencies.count)))),
            ("seconds_per_change_max", .double(latencies.max() ?? 0)), ("cpu_s", .double(cpu / 1_000_000)),
            ("cpu_ms_per_change", .double(cpu / 1000 / Double(changes))),
        ])
    }
}
