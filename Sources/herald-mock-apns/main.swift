import Foundation
import HeraldMockProviders
import Synchronization

// A mock APNs for end-to-end tests and benchmarks: HTTP/2 over TLS with a certificate made at
// start, answering every well-formed push 200 (or `--status`). With `--log FILE` it appends
// `{"apns_id","token","notification_id","protocol","received_ns"}` per request, so a test can count
// what arrived (`received_ns`: CLOCK_REALTIME in nanoseconds when the request was complete, which
// a benchmark on the same machine compares with a send time);
// with `--log-payloads` also the `apns-*` headers and the JSON payload (a test that checks
// what a device would get).
//
//   herald-mock-apns [--port 0] [--log FILE] [--log-payloads] [--h2-only] [--status 200] [--reason R] [--delay-ms 0]
// (`--reason`: the `reason` of a non-200 answer; by default Unregistered for 410, else InternalServerError.)
// (`--h2-only`: HTTP/2 on every connection, as APNs; for clients that negotiate no ALPN.)
// `--chaos P` makes P % of pushes misbehave, in turn: 429 TooManyRequests, 500, 503, no answer
// for `--hang-ms` (a stalled provider), the connection dropped mid-stream. The log's `answer`
// says what each request got (a status, "hang" or "drop").
// `--app TOPIC=KEY_ID=KEY.pem` (repeatable): pushes to TOPIC must carry a provider token signed by
// that key, else 403 InvalidProviderToken (one mock for several apps checks each push's
// credentials); the log then has each push's `topic`, `kid` and `iss`.
// An ActivityKit push (`apns-push-type: liveactivity`) must be well formed (`LiveActivityCheck`),
// else 400 with the reason; its log line has `push_type` and, with `--log-payloads`, the payload.
// Broadcast channels (iOS 18) are served too (`BroadcastChannels`): the channel management API
// and broadcasts, on this same port; their log lines have `kind` `channel` or `broadcast`.
// prints: mock-apns listening on <port> ca=<certificate.pem>

var port = 0
var logPath: String?
var status = 200
var reasonOverride: String?
var delayMs = 0
var logPayloads = false
var http2Only = false
var chaosPercent = 0
var hangMs = 30_000
var providerTokens = ProviderTokens()
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--port": port = Int(arguments.next() ?? "") ?? 0
    case "--log": logPath = arguments.next()
    case "--status": status = Int(arguments.next() ?? "") ?? 200
    case "--reason": reasonOverride = arguments.next()
    case "--delay-ms": delayMs = Int(arguments.next() ?? "") ?? 0
    case "--log-payloads": logPayloads = true
    case "--h2-only": http2Only = true
    case "--chaos": chaosPercent = Int(arguments.next() ?? "") ?? 0
    case "--hang-ms": hangMs = Int(arguments.next() ?? "") ?? 30_000
    case "--app":
        do {
            try providerTokens.add(arguments.next() ?? "")
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
            exit(2)
        }
    default:
        FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
        exit(2)
    }
}

let log: FileHandle? = logPath.flatMap { path in
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    return FileHandle(forWritingAtPath: path)
}
let logLock = Mutex(())
let answer = status
let reason = reasonOverride
let delay: Duration? = delayMs > 0 ? .milliseconds(delayMs) : nil
let withPayloads = logPayloads
let tokens = providerTokens

/// What a misbehaving provider does to one push (`--chaos`).
enum Misbehaviour: CaseIterable {
    case tooManyRequests, internalError, unavailable, hang, drop

    func response(hang: Duration) -> MockPushServer.Response {
        switch self {
        case .tooManyRequests: .json(429, ["reason": "TooManyRequests"])
        case .internalError: .json(500, ["reason": "InternalServerError"])
        case .unavailable: .json(503, ["reason": "ServiceUnavailable"])
        case .hang: MockPushServer.Response(status: 503, delay: hang)
        case .drop: .dropped
        }
    }

    var logged: Any {
        switch self {
        case .hang: "hang"
        case .drop: "drop"
        case .tooManyRequests: 429
        case .internalError: 500
        case .unavailable: 503
        }
    }
}
let chaos = chaosPercent
let hang = Duration.milliseconds(hangMs)
let requestCount = Atomic<Int>(0)

/// CLOCK_REALTIME in nanoseconds: a benchmark on the same machine compares it with its own clock.
func realtimeNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
}

let channels = BroadcastChannels()

/// Appends one log line: `fields`, with the provider token's `kid` and `iss` when apps were
/// given, and the `apns-*` headers and payload with `--log-payloads`.
func write(_ fields: [String: Any], _ request: MockPushServer.Request, provider: (keyID: String?, issuer: String?, valid: Bool), to log: FileHandle) {
    var line = fields
    if !tokens.apps.isEmpty {
        line["kid"] = provider.keyID ?? ""
        line["iss"] = provider.issuer ?? ""
    }
    if withPayloads {
        line["headers"] = Dictionary(request.headers.filter { $0.0.lowercased().hasPrefix("apns-") }.map { ($0.0.lowercased(), $0.1) }) { first, _ in first }
        line["payload"] = request.json ?? [:]
    }
    if let data = try? JSONSerialization.data(withJSONObject: line) {
        logLock.withLock { _ in log.write(data + Data("\n".utf8)) }
    }
}

/// A channel management request or a broadcast (`BroadcastChannels`), checked for the
/// provider token of the bundle its path names; its log line has `kind` (`channel` or
/// `broadcast`), the method, `channel_id` and the answer.
func channelAnswer(_ request: MockPushServer.Request, receivedNs: Int64) -> MockPushServer.Response {
    let bundle = BroadcastChannels.bundle(of: request.path)
    let provider = tokens.check(authorization: request.header("authorization"), topic: bundle)
    let response: MockPushServer.Response =
        if request.header("authorization")?.hasPrefix("bearer ") != true { .json(403, ["reason": "MissingProviderToken"]) } else if !provider.valid {
            .json(403, ["reason": "InvalidProviderToken"])
        } else { channels.answer(request) }
    if let log {
        let broadcast = request.path.hasPrefix("/4/")
        var line: [String: Any] = [
            "kind": broadcast ? "broadcast" : "channel", "method": request.method, "path": request.path, "bundle": bundle ?? "",
            "channel_id": request.header("apns-channel-id") ?? response.headers.first { $0.0 == "apns-channel-id" }?.1 ?? "",
            "answer": response.status, "protocol": request.protocolName, "received_ns": receivedNs,
        ]
        if let reason = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any], let text = reason["reason"] as? String {
            line["reason"] = text
        }
        write(line, request, provider: provider, to: log)
    }
    return response
}

let server = try await MockPushServer.start(port: port, keepRequests: false, http2Only: http2Only) { request in
    let receivedNs = realtimeNanoseconds()
    if BroadcastChannels.handles(request.path) { return channelAnswer(request, receivedNs: receivedNs) }
    let token = request.path.hasPrefix("/3/device/") ? String(request.path.dropFirst("/3/device/".count)) : ""
    let apnsID = request.header("apns-id") ?? ""
    let wellFormed = request.method == "POST" && !token.isEmpty && request.header("authorization")?.hasPrefix("bearer ") == true
    let topic = request.header("apns-topic")
    let provider = tokens.check(authorization: request.header("authorization"), topic: topic)
    let liveActivityProblem =
        request.header("apns-push-type") == "liveactivity"
        ? LiveActivityCheck.problem(topic: topic, priority: request.header("apns-priority"), payload: request.json) : nil
    let number = requestCount.add(1, ordering: .relaxed).newValue
    // Every `100 / chaos`-th request misbehaves, cycling through the kinds (deterministic, so
    // a run can be repeated).
    let misbehaviour: Misbehaviour? =
        wellFormed && chaos > 0 && (number * chaos) % 100 < chaos
        ? Misbehaviour.allCases[(number * chaos / 100) % Misbehaviour.allCases.count] : nil
    let response: MockPushServer.Response =
        if !wellFormed { .json(400, ["reason": "MissingProviderToken"]) } else if !provider.valid {
            .json(403, ["reason": "InvalidProviderToken"])
        } else if let liveActivityProblem {
            .json(400, ["reason": liveActivityProblem])
        } else if let misbehaviour { misbehaviour.response(hang: hang) } else if answer == 200 {
            MockPushServer.Response(status: 200, headers: [("apns-id", apnsID)], delay: delay)
        } else { .json(answer, ["reason": reason ?? (answer == 410 ? "Unregistered" : "InternalServerError")]) }
    if let log {
        let notification = request.json?["notification_id"] as? String ?? ""
        var line: [String: Any] = [
            "apns_id": apnsID, "token": token, "notification_id": notification, "protocol": request.protocolName,
            "answer": misbehaviour?.logged ?? response.status, "received_ns": receivedNs,
        ]
        if let type = request.header("apns-push-type") { line["push_type"] = type }
        if !tokens.apps.isEmpty { line["topic"] = topic ?? "" }
        write(line, request, provider: provider, to: log)
    }
    return response
}
FileHandle.standardOutput.write(Data("mock-apns listening on \(server.port) ca=\(server.caFile)\n".utf8))
while true { try await Task.sleep(for: .seconds(3600)) }  // only ever ended by a signal
