import ArgumentParser
import AsyncHTTPClient
import Crypto
import Foundation
import HeraldCore
import HeraldPush
import NIOCore
import NIOHPACK

/// `apns-breakdown`: the CPU cost of each Herald-side step of one APNs send (no network),
/// to explain `apns`. Each step alone in a loop on one thread.
struct APNsBreakdown: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "apns-breakdown", abstract: "Per-step CPU cost of APNsSender's own work.")

    @Option(help: "Iterations per step.") var iterations = 20000

    func run() async throws {
        let keyPath = try writeAPNsKey(pem: P256.Signing.PrivateKey().pemRepresentation)
        defer { try? FileManager.default.removeItem(atPath: keyPath) }
        let token = try await APNsProviderToken(
            privateKeyPEM: try String(contentsOfFile: keyPath, encoding: .utf8), keyID: "KEY1234567", teamID: "TEAM123456",
            clock: SystemClock())
        let message = PushMessage(
            deliveryID: "dlv_0_12345", notificationID: "ntf_01JD5R8Y4W2KQ7X9ABCDEF", userID: "user-1", deviceID: "dev-1",
            type: SampleMessage.type, severity: .info, provider: .apns, platform: .ios, token: deviceToken(1), title: SampleMessage.title,
            body: SampleMessage.body,
            data: .object([
                "conversation_id": .string(SampleMessage.thread), "notification_id": .string("ntf_01JD5R8Y4W2KQ7X9ABCDEF"),
                "type": .string(SampleMessage.type),
            ]),
            category: SampleMessage.category, threadID: SampleMessage.thread, badge: SampleMessage.badge)
        var sink = 0
        var fields: [(String, JSON)] = [("bench", .string("apns-breakdown")), ("impl", .string("herald")), ("cpus", .string(allowedCPUs()))]
        let iterations = self.iterations

        func record(_ name: String, _ cpu: Double) { fields.append((name + "_us", .double(cpu / Double(iterations)))) }
        func step(_ name: String, _ body: () throws -> Int) rethrows {
            for _ in 0..<500 { sink &+= try body() }
            let cpu0 = processCPUMicros()
            for _ in 0..<iterations { sink &+= try body() }
            record(name, processCPUMicros() - cpu0)
        }

        step("apns_id") { APNsSender.apnsID(forDelivery: message.deliveryID).utf8.count }
        try step("payload_encode") { try APNsPayload.encode(message).count }
        step("headers") { APNsSender.headers(for: message, topic: "com.example.herald").count }
        step("hpack_headers_build") {
            // What APNsSender.headers(_:token:) does, given the token.
            var headers = HPACKHeaders()
            headers.reserveCapacity(8)
            headers.add(name: "authorization", value: "bearer xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx")
            for (name, value) in APNsSender.headers(for: message, topic: "com.example.herald") { headers.add(name: name, value: value) }
            return headers.count
        }
        let ok = PushHTTP.Response(status: 200, headers: ["apns-id": "8E1B9F0C-2D1A-8C3B-9A8E-1F2E3D4C5B6A"], body: Data())
        step("response_json_on_empty_200") { ok.json == nil ? 1 : 0 }
        step("response_retry_after") { ok.retryAfter(now: Date()) == nil ? 1 : 0 }

        // Async steps: the provider-token actor hop and the per-request deadline.
        for _ in 0..<500 { sink &+= try await token.token().utf8.count }
        var cpu0 = processCPUMicros()
        for _ in 0..<iterations { sink &+= try await token.token().utf8.count }
        record("provider_token_cached", processCPUMicros() - cpu0)
        for _ in 0..<500 { sink &+= try await withDeadline(.seconds(10)) { 1 } }
        cpu0 = processCPUMicros()
        for _ in 0..<iterations { sink &+= try await withDeadline(.seconds(10)) { 1 } }
        record("with_deadline_noop", processCPUMicros() - cpu0)
        fields.append(("payload_bytes", .int(try APNsPayload.encode(message).count)))
        fields.append(("sink", .int(sink & 1)))
        emit(fields)
    }
}
