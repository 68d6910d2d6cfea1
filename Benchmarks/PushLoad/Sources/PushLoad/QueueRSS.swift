import ArgumentParser
import Crypto
import Foundation
import HeraldCore
@_spi(Storage) import HeraldNotifications
import HeraldPush
import HeraldStorage
import Logging
import SQLKit

/// `queue-rss`: the process's memory with 100,000 push deliveries queued, and while the
/// delivery worker drains them against a mock APNs.
///
/// The queue is built as Herald builds it: a fresh SQLite database (Herald's migrations), one
/// APNs device per user (`DeviceStore.register`), then per delivery a notification
/// (`NotificationStore.insert`) and a pending push delivery (`DeliveryStore.insert`), 1,000
/// per transaction. Then `DeliveryWorker.run()` (the production loop: claim a batch, read
/// notification + device + unread count, send, record) drains it while VmRSS is sampled
/// every 50 ms from /proc/self/status.
struct QueueRSS: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "queue-rss", abstract: "RSS with N push deliveries queued and draining.")

    @Option(help: "The mock's base URL.") var url: String
    @Option(help: "PEM of the mock's certificate.") var ca: String
    @Option var deliveries = 100_000
    @Option(help: "Users (one APNs device each); deliveries are spread over them.") var users = 10_000
    @Option(help: "DeliveryWorker.Settings.concurrency (Herald's default: 32).") var concurrency = 32
    @Option(help: "DeliveryWorker.Settings.batchSize (Herald's default: 100).") var batch = 100
    @Option(help: "APNs HTTP/2 connections.") var connections = 2
    @Option(help: "Stop draining after this many seconds.") var maxDrainSeconds: Double = 600
    @Option(help: "SQLite file (default: a fresh temporary one, removed afterwards).") var db: String?

    func run() async throws {
        let rssStart = residentBytes().rss
        var logger = Logger(label: "pushload")
        logger.logLevel = .warning
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushload-queue-\(UUID().uuidString)").path
        let path = db ?? directory + "/herald.sqlite"
        defer { if db == nil { try? FileManager.default.removeItem(atPath: directory) } }
        let database = try await SQLiteDatabase.open(path: path, logger: logger)
        try await Migrator(sets: [NotificationMigrations.set]).migrate(database, logger: logger)
        let rssOpened = residentBytes().rss

        // -- fill the queue
        let clock = ContinuousClock()
        let fillStart = clock.now
        let now = Date().epochMilliseconds
        let users = self.users
        let deliveries = self.deliveries
        for first in stride(from: 0, to: users, by: 1000) {
            try await database.transaction { db in
                for u in first..<min(first + 1000, users) {
                    _ = try await DeviceStore().register(
                        db,
                        DeviceRecord(
                            id: "dev_\(u)", userID: "user_\(u)", provider: .apns, token: deviceToken(u), platform: .ios, appVersion: "5.2.0",
                            osVersion: "18.1", locale: "en_GB", createdAt: now, lastUsedAt: now),
                        now: now)
                }
            }
        }
        let data = #"{"conversation_id":"conversation-42"}"#
        for first in stride(from: 0, to: deliveries, by: 1000) {
            try await database.transaction { db in
                for i in first..<min(first + 1000, deliveries) {
                    let u = i % users
                    try await NotificationStore().insert(
                        db,
                        NotificationRecord(
                            id: "ntf_\(i)", userID: "user_\(u)", type: SampleMessage.type, severity: .info, delivery: .push,
                            title: SampleMessage.title, body: SampleMessage.body, data: data, category: SampleMessage.category,
                            threadID: SampleMessage.thread, createdAt: now))
                    try await DeliveryStore().insert(
                        db,
                        DeliveryRecord(
                            id: "dlv_\(i)", notificationID: "ntf_\(i)", userID: "user_\(u)", channel: .push, deviceID: "dev_\(u)",
                            provider: .apns, status: .pending, nextAttemptAt: now, createdAt: now, updatedAt: now))
                }
            }
            if first % 20_000 == 0 { progress("queue-rss: \(first) deliveries queued") }
        }
        let fillSeconds = Double((clock.now - fillStart) / .microseconds(1)) / 1_000_000
        let pending = try await database.withConnection { db in try await DeliveryStore().pendingPushCount(db) }
        let rssQueued = residentBytes().rss
        progress("queue-rss: \(pending) pending in \(String(format: "%.1f", fillSeconds)) s, RSS \(rssQueued / 1_048_576) MiB")

        // -- drain it
        let keyPath = try writeAPNsKey(pem: P256.Signing.PrivateKey().pemRepresentation)
        defer { try? FileManager.default.removeItem(atPath: keyPath) }
        let config = APNsConfig(
            teamID: "TEAM123456", keyID: "KEY1234567", privateKeyFile: keyPath, topic: "com.example.herald", baseURL: url,
            connections: connections, caFile: ca)
        let client = try APNsSender.makeClient(config)
        let sender = try await APNsSender(config: config, client: client, clock: SystemClock())
        var settings = DeliveryWorker.Settings()
        settings.concurrency = concurrency
        settings.batchSize = batch
        let worker = DeliveryWorker(
            database: database, senders: [.apns: sender], fallback: nil, clock: SystemClock(), settings: settings, logger: logger)
        let rssReady = residentBytes().rss

        let cpu0 = processCPUMicros()
        let drainStart = clock.now
        let task = Task { try await worker.run() }
        var peak = rssReady
        var peakParts = residentParts()
        var peakHeap = heapUsage()
        var series: [Int] = []
        var finished = 0
        var nextSecond = drainStart + .seconds(1)
        while true {
            try await Task.sleep(for: .milliseconds(50))
            let rss = residentBytes().rss
            if rss > peak {
                peak = rss
                peakParts = residentParts()
                peakHeap = heapUsage()
            }
            finished = worker.statistics.snapshot.outcomes.values.reduce(0, +)
            if clock.now >= nextSecond {
                series.append(rss)
                nextSecond = nextSecond + .seconds(1)
                if series.count % 10 == 0 { progress("queue-rss: \(finished) finished, RSS \(rss / 1_048_576) MiB") }
            }
            if finished >= pending || clock.now - drainStart > .milliseconds(Int64(maxDrainSeconds * 1000)) { break }
        }
        let drainSeconds = Double((clock.now - drainStart) / .microseconds(1)) / 1_000_000
        let cpu = processCPUMicros() - cpu0
        task.cancel()
        _ = try? await task.value
        let rssEnd = residentBytes()
        let outcomes = worker.statistics.snapshot.outcomes
        await client.shutdown()
        let remaining = try await database.withConnection { db in try await DeliveryStore().pendingPushCount(db) }
        await database.close()
        let fileBytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0

        func mib(_ bytes: Int) -> JSON { .double(Double(bytes) / 1_048_576) }
        emit([
            ("bench", .string("queue-rss")), ("impl", .string("herald")), ("cpus", .string(allowedCPUs())),
            ("deliveries", .int(deliveries)), ("users", .int(users)), ("queued_pending", .int(pending)),
            ("worker_concurrency", .int(concurrency)), ("worker_batch", .int(batch)), ("connections", .int(connections)),
            ("fill_s", .double(fillSeconds)), ("sqlite_file_bytes", .int(fileBytes)),
            ("rss_start_mib", mib(rssStart)), ("rss_db_open_mib", mib(rssOpened)), ("rss_queued_mib", mib(rssQueued)),
            ("rss_worker_ready_mib", mib(rssReady)), ("rss_peak_drain_mib", mib(peak)), ("rss_end_mib", mib(rssEnd.rss)),
            ("vm_hwm_mib", mib(rssEnd.hwm)), ("peak_rss_anon_mib", mib(peakParts.anon)), ("peak_rss_file_mib", mib(peakParts.file)),
            ("peak_rss_shmem_mib", mib(peakParts.shmem)), ("peak_heap_in_use_mib", mib(peakHeap.inUse)),
            ("peak_heap_free_mib", mib(peakHeap.free)), ("peak_heap_mmapped_mib", mib(peakHeap.mmapped)),
            ("drain_s", .double(drainSeconds)), ("finished", .int(finished)), ("remaining_pending", .int(remaining)),
            ("outcomes", .object(outcomes.sorted { $0.key < $1.key }.map { ($0.key, JSON.int($0.value)) })),
            ("drain_deliveries_per_s", .double(Double(finished) / drainSeconds)),
            ("drain_cpu_us_per_delivery", .double(cpu / Double(max(1, finished)))),
            ("rss_series_mib", .array(series.map { mib($0) })),
        ])
    }
}
