import Foundation
import HeraldCore
import HeraldRealtime
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The operations console at `/console`: a static page (no build step, no CDN) that asks for
/// an operator token, reads `GET /api/v1/operators/console` and then follows the channel
/// `operations:console` over the native realtime protocol, where each node sends its view
/// every second while a console watches it.
///
/// Why the page is public and the data is not: a browser cannot send a bearer token when it
/// opens a URL, so the page holds nothing; every figure comes through operator-only calls.
struct ConsoleModule {
    static let channel = "operations:console"

    let realtime: RealtimeGateway
    let dispatch: DispatchModule
    let trips: TripsModule
    let notifications: NotificationModule
    let errors: RecentErrors
    let clock: any HeraldClock
    let assets = ConsoleAssets.load()

    /// Everything the console draws, as this node sees it.
    func snapshot() async throws -> JSONValue {
        let now = clock.now().epochMilliseconds
        let (drivers, jobs) = try await dispatch.service.jobs.operationsView()
        let active = try await trips.service.operationsView()
        let (deliveries, queueDepth, failures) = try await notifications.service.operationsView(now: now)
        let nodes = try await realtime.presence.connectionsPerNode()
        return [
            "node": .string(realtime.nodeID), "generated_at": .string(Timestamp.string(epochMilliseconds: now)),
            "drivers": .array(drivers), "jobs": .array(jobs), "trips": .array(active),
            "deliveries": .array(deliveries), "push_queue_depth": .number(Double(queueDepth)), "push_failures": .array(failures),
            "nodes": .array(nodes.sorted { $0.key < $1.key }.map { ["node": .string($0.key), "connections": .number(Double($0.value))] }),
            "errors": .array(errors.json),
        ]
    }

    func addPageRoutes(to router: Router<HeraldRequestContext>) {
        let assets = self.assets
        @Sendable func serve(_ name: String) -> Response {
            guard let file = assets.files[name] else {
                return Response(
                    status: .serviceUnavailable, headers: [.contentType: "text/plain; charset=utf-8"],
                    body: .init(byteBuffer: ByteBuffer(string: "The console's files are not installed next to the herald binary.\n")))
            }
            return Response(
                status: .ok,
                headers: [
                    .contentType: file.contentType, .cacheControl: "no-cache",
                    // Only its own files; no inline script; frames nobody.
                    .contentSecurityPolicy: "default-src 'self'; connect-src 'self' ws: wss:; frame-ancestors 'none'",
                    .xContentTypeOptions: "nosniff",
                ],
                body: .init(byteBuffer: ByteBuffer(bytes: file.bytes)))
        }
        router.get("/console") { _, _ in serve("index.html") }
        router.get("/console/console.js") { _, _ in serve("console.js") }
        router.get("/console/console.css") { _, _ in serve("console.css") }
    }

    func addRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.get("/operators/console") { [self] _, context in
            _ = try context.require(.operator, .service)
            return try Envelope.response(try await snapshot(), status: .ok, context: context, clock: clock)
        }
    }

    var feed: ConsoleFeed { ConsoleFeed(console: self, logger: realtime.logger) }

    static let operations: [APIOperation] = [
        APIOperation(
            "GET", "/console", summary: "The operations console (a static page; it asks for an operator token)", tag: "operations",
            access: .public_, response: Schema.string(), enveloped: false, errors: [503: "The console's files are not installed"], contentType: "text/html"),
        APIOperation(
            "GET", "/console/console.js", summary: "The console's script", tag: "operations", access: .public_, response: Schema.string(),
            enveloped: false, errors: [503: "The console's files are not installed"], contentType: "text/javascript"),
        APIOperation(
            "GET", "/console/console.css", summary: "The console's style", tag: "operations", access: .public_, response: Schema.string(),
            enveloped: false, errors: [503: "The console's files are not installed"], contentType: "text/css"),
        APIOperation(
            "GET", "/api/v1/operators/console",
            summary:
                "What the console shows: online drivers, open jobs with offer rounds, trips under way with last positions, deliveries by channel, provider and status (last hour), the push queue, failed pushes, connections per node, recent server errors",
            description:
                "The same object is sent every second as `console_snapshot` on the realtime channel `operations:console` to the consoles connected to each node.",
            tag: "operations", access: .authenticated(roles: ["operator", "service"]),
            response: Schema.object([
                "node": Schema.string(), "generated_at": Schema.string(format: "date-time"), "drivers": ["type": "array"], "jobs": ["type": "array"],
                "trips": ["type": "array"], "deliveries": ["type": "array"], "push_queue_depth": Schema.integer(), "push_failures": ["type": "array"],
                "nodes": ["type": "array"], "errors": ["type": "array"],
            ])),
    ]
}

/// Sends the console's view to the consoles connected to this node, every second while any is.
struct ConsoleFeed: Service {
    let console: ConsoleModule
    let logger: Logger

    func run() async throws {
        let hub = console.realtime.hub
        let channel = ConsoleModule.channel
        await PeriodicLoop.run(every: .seconds(1), start: .afterInterval, logger: logger, failure: "building the console view failed") {
            guard hub.hasLocalMembers(channel) else { return }
            let snapshot = try await console.snapshot()
            let text = String(decoding: try JSONEncoder().encode(snapshot), as: UTF8.self)
            await hub.deliverLocally(
                RealtimeEvent(room: channel, seq: nil, name: "console_snapshot", payloadJSON: text, createdAt: console.clock.now().epochMilliseconds))
        }
    }
}
