import ArgumentParser
import Crypto
import Foundation
import HeraldCore
import HeraldPush
import Synchronization

/// `apns`: N loops, each calling `APNsSender.send` back to back, against a mock APNs.
///
/// Every send is a distinct delivery (its own `apns-id`); the provider token is Herald's own
/// (ES256 .p8 made here, signed once and cached as in production). The first `--warmup`
/// seconds (TLS handshakes, the first token) are not counted; then sends, latency and the
/// process CPU time (all threads, user + system) are measured over `--seconds`.
struct APNsLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "apns", abstract: "Drive APNsSender.send against a mock APNs.")

    @Option(help: "The mock's base URL.") var url: String
    @Option(help: "PEM of the mock's certificate.") var ca: String
    @Option(help: "Measured seconds.") var seconds: Double = 60
    @Option(help: "Seconds before measuring.") var warmup: Double = 5
    @Option(help: "Concurrent send loops.") var concurrency = 100
    @Option(help: "HTTP/2 connections (APNsConfig.connections; Herald's default is 2).") var connections = 2
    @Option var label = "herald"

    func run() async throws {
        let keyPath = try writeAPNsKey(pem: P256.Signing.PrivateKey().pemRepresentation)
        defer { try? FileManager.default.removeItem(atPath: keyPath) }
        let config = APNsConfig(
            teamID: "TEAM123456", keyID: "KEY1234567", privateKeyFile: keyPath, topic: "com.example.herald", environment: .production,
            baseURL: url, connections: connections, caFile: ca)
        let client = try APNsSender.makeClient(config)
        let sender = try await APNsSender(config: config, client: client, clock: SystemClock())

        let template = PushMessage(
            deliveryID: "", notificationID: "ntf_01JD5R8Y4W2KQ7X9ABCDEF", userID: "user-1", deviceID: "dev-1", type: SampleMessage.type,
            severity: .info, provider: .apns, platform: .ios, token: deviceToken(0), title: SampleMessage.title,
            body: SampleMessage.body,
            data: .object([
                "conversation_id": .string(SampleMessage.thread), "notification_id": .string("ntf_01JD5R8Y4W2KQ7X9ABCDEF"),
                "type": .string(SampleMessage.type),
            ]),
            category: SampleMessage.category, threadID: SampleMessage.thread, badge: SampleMessage.badge)
        let tokens = (0..<1000).map(deviceToken)

        let counters = Counters()
        let clock = ContinuousClock()
        let start = clock.now
        let measureStart = start + .milliseconds(Int64(warmup * 1000))
        let measureEnd = measureStart + .milliseconds(Int64(seconds * 1000))
        progress("apns \(label): \(concurrency) loops, \(connections) connections, warmup \(warmup) s, measuring \(seconds) s")

        struct Window: Sendable {
            var sends = 0
            var cpuMicros = 0.0
            var user = 0.0
            var sys = 0.0
            var elapsed = 0.0
            var perSecond: [Int] = []
        }
        let results = try await withThrowingTaskGroup(of: [UInt32].self, returning: (Window, [UInt32]).self) { group in
            for loop in 0..<concurrency {
                group.addTask {
                    var latencies: [UInt32] = []
                    latencies.reserveCapacity(Int(seconds) * 400)
                    var message = template
                    var index = 0
                    while true {
                        let begin = clock.now
                        if begin >= measureEnd { break }
                        message.deliveryID = "dlv_\(loop)_\(index)"
                        message.token = tokens[(loop &* 7 &+ index) % tokens.count]
                        index += 1
                        do {
                            let result = try await sender.send(message)
                            if case .accepted = result {
                            } else {
                                counters.failed.add(1, ordering: .relaxed)
                                counters.note("\(result)")
                            }
                        } catch {
                            counters.failed.add(1, ordering: .relaxed)
                            counters.note(String(describing: error))
                        }
                        let end = clock.now
                        counters.completed.add(1, ordering: .relaxed)
                        if begin >= measureStart && end <= measureEnd {
                            let us = (end - begin) / .microseconds(1)
                            latencies.append(UInt32(min(us, Double(UInt32.max))))
                        }
                    }
                    return latencies
                }
            }
            // The sampler: counts at the window's edges and once a second in between.
            try await Task.sleep(until: measureStart, clock: clock)
            var window = Window()
            let sends0 = counters.completed.load(ordering: .relaxed)
            let cpu0 = processCPUMicros()
            let split0 = processUserSysMicros()
            let t0 = clock.now
            var last = sends0
            var tick = measureStart
            while true {
                tick = tick + .seconds(1)
                if tick > measureEnd { break }
                try await Task.sleep(until: tick, clock: clock)
                let now = counters.completed.load(ordering: .relaxed)
                window.perSecond.append(now - last)
                last = now
            }
            try await Task.sleep(until: measureEnd, clock: clock)
            window.sends = counters.completed.load(ordering: .relaxed) - sends0
            window.cpuMicros = processCPUMicros() - cpu0
            let split1 = processUserSysMicros()
            window.user = split1.user - split0.user
            window.sys = split1.sys - split0.sys
            window.elapsed = Double((clock.now - t0) / .microseconds(1)) / 1_000_000
            var all: [UInt32] = []
            for try await part in group { all.append(contentsOf: part) }
            return (window, all)
        }
        await client.shutdown()

        var (window, latencies) = results
        let rate = Double(window.sends) / window.elapsed
        emit(
            [
                ("bench", .string("apns")), ("impl", .string(label)), ("url", .string(url)), ("concurrency", .int(concurrency)),
                ("connections", .int(connections)), ("cpus", .string(allowedCPUs())), ("warmup_s", .double(warmup)),
                ("duration_s", .double(window.elapsed)), ("sends", .int(window.sends)),
                ("failed_total", .int(counters.failed.load(ordering: .relaxed))), ("first_failure", counters.firstFailure.map(JSON.string) ?? .null),
                ("sends_per_s", .double(rate)),
                ("min_1s_sends", .int(window.perSecond.min() ?? 0)), ("max_1s_sends", .int(window.perSecond.max() ?? 0)),
                ("cpu_us_per_send", .double(window.cpuMicros / Double(max(1, window.sends)))),
                ("cpu_user_s", .double(window.user / 1_000_000)), ("cpu_sys_s", .double(window.sys / 1_000_000)),
                ("cpu_cores_used", .double(window.cpuMicros / 1_000_000 / window.elapsed)),
                ("latency_samples", .int(latencies.count)),
            ] + latencySummary(&latencies) + [
                ("rss_bytes", .int(residentBytes().rss)), ("per_second", .array(window.perSecond.map(JSON.int))),
            ])
    }
}

/// Counters shared by the send loops.
final class Counters: Sendable {
    let completed = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    private let failure = Mutex<String?>(nil)

    func note(_ text: String) { failure.withLock { $0 = $0 ?? text } }
    var firstFailure: String? { failure.withLock { $0 } }
}
