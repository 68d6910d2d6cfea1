import Foundation
import HeraldMockProviders
import Synchronization

// A mock APNs for end-to-end tests and benchmarks: HTTP/2 over TLS with a certificate made at
// start, answering every well-formed push 200 (or `--status`). With `--log FILE` it appends
// `{"apns_id","token","notification_id","protocol"}` per request, so a test can count what arrived;
// with `--log-payloads` also the `apns-*` headers and the JSON payload (a test that checks
// what a device would get).
//
//   herald-mock-apns [--port 0] [--log FILE] [--log-payloads] [--h2-only] [--status 200] [--delay-ms 0]
// (`--h2-only`: HTTP/2 on every connection, as APNs; for clients that negotiate no ALPN.)
// prints: mock-apns listening on <port> ca=<certificate.pem>

var port = 0
var logPath: String?
var status = 200
var delayMs = 0
var logPayloads = false
var http2Only = false
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--port": port = Int(arguments.next() ?? "") ?? 0
    case "--log": logPath = arguments.next()
    case "--status": status = Int(arguments.next() ?? "") ?? 200
    case "--delay-ms": delayMs = Int(arguments.next() ?? "") ?? 0
    case "--log-payloads": logPayloads = true
    case "--h2-only": http2Only = true
    default:
        FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
        exit(2)
    }
}

let log: FileHandle? = logPath.flatMap { path in
    FileManager.default.createFile(atPath: path, contents: nil)
    return FileHandle(forWritingAtPath: path)
}
let logLock = Mutex(())
let answer = status
let delay: Duration? = delayMs > 0 ? .milliseconds(delayMs) : nil
let withPayloads = logPayloads

let server = try await MockPushServer.start(port: port, keepRequests: false, http2Only: http2Only) { request in
    let token = request.path.hasPrefix("/3/device/") ? String(request.path.dropFirst("/3/device/".count)) : ""
    let apnsID = request.header("apns-id") ?? ""
    if let log {
        let notification = request.json?["notification_id"] as? String ?? ""
        var line: [String: Any] = ["apns_id": apnsID, "token": token, "notification_id": notification, "protocol": request.protocolName]
        if withPayloads {
            line["headers"] = Dictionary(request.headers.filter { $0.0.lowercased().hasPrefix("apns-") }.map { ($0.0.lowercased(), $0.1) }) { first, _ in first }
            line["payload"] = request.json ?? [:]
        }
        if let data = try? JSONSerialization.data(withJSONObject: line) {
            logLock.withLock { _ in log.write(data + Data("\n".utf8)) }
        }
    }
    guard request.method == "POST", !token.isEmpty, request.header("authorization")?.hasPrefix("bearer ") == true else {
        return .json(400, ["reason": "MissingProviderToken"])
    }
    if answer == 200 { return MockPushServer.Response(status: 200, headers: [("apns-id", apnsID)], delay: delay) }
    return .json(answer, ["reason": answer == 410 ? "Unregistered" : "InternalServerError"])
}
FileHandle.standardOutput.write(Data("mock-apns listening on \(server.port) ca=\(server.caFile)\n".utf8))
while true { try await Task.sleep(for: .seconds(3600)) }
