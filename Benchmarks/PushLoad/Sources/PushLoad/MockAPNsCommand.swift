import ArgumentParser
import Foundation
import HeraldMockProviders
import NIOCore
import NIOPosix

/// `mock-apns`: an APNs stand-in as its own process, answering 200 and echoing `apns-id`.
///
/// `--impl shared` is Herald's `MockPushServer` (keepRequests: false) with the same handler
/// as `herald-mock-apns`; `--impl fast` is `FastMockAPNs` (answers on the event loop).
struct MockAPNsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "mock-apns", abstract: "Run a mock APNs until killed.")

    @Option(help: "Port (0: any free port).") var port = 0
    @Option(help: "fast (event-loop answers) or shared (Herald's MockPushServer).") var impl = "fast"
    @Option(help: "Event-loop threads of the fast mock.") var threads = 1
    @Option(help: "Connection-level flow-control window of the fast mock, bytes (HTTP/2 default: 65535).")
    var connectionWindow = 65535

    func run() async throws {
        let boundPort: Int
        let caFile: String
        switch impl {
        case "shared":
            let server = try await MockPushServer.start(port: port, keepRequests: false) { request in
                // What herald-mock-apns answers (without its request log).
                let token = request.path.hasPrefix("/3/device/") ? String(request.path.dropFirst("/3/device/".count)) : ""
                let apnsID = request.header("apns-id") ?? ""
                guard request.method == "POST", !token.isEmpty, request.header("authorization")?.hasPrefix("bearer ") == true else {
                    return .json(400, ["reason": "MissingProviderToken"])
                }
                return MockPushServer.Response(status: 200, headers: [("apns-id", apnsID)])
            }
            boundPort = server.port
            caFile = server.caFile
        case "fast":
            let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, threads))
            let started = try await FastMockAPNs.start(port: port, group: group, connectionWindow: connectionWindow)
            boundPort = started.port
            caFile = started.caFile
        default:
            throw ValidationError("--impl must be fast or shared")
        }
        emit([
            ("bench", .string("mock-apns")), ("impl", .string(impl)), ("port", .int(boundPort)), ("ca", .string(caFile)),
            ("connection_window", .int(impl == "fast" ? connectionWindow : 65535)), ("cpus", .string(allowedCPUs())), ("pid", .int(Int(getpid()))),
        ])
        while true { try await Task.sleep(for: .seconds(3600)) }
    }
}
