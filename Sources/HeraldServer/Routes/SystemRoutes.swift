import Foundation
import HeraldCore
import HeraldRealtime
import HeraldStorage
import Hummingbird

/// Liveness, readiness and metrics for load balancers and Prometheus; outside `/api/v1`
/// because probes send no token and need no envelope.
struct SystemRoutes {
    let database: any Database
    let metrics: HeraldMetrics
    let realtime: RealtimeGateway
    let notifications: NotificationModule
    let dispatch: DispatchModule
    let trips: TripsModule
    let transit: TransitModule

    func addRoutes(to router: Router<HeraldRequestContext>) {
        router.get("/healthz") { _, _ in
            Self.json(["status": "ok"], status: .ok)
        }
        router.get("/readyz") { _, context in
            do {
                try await database.ping()
                // The node listens while it loads its feeds (a large feed takes seconds): not
                // ready until then. What it could not load is named, but does not stop it.
                let loaded = transit.service.loader.isStarted
                let problems = transit.service.loader.loadProblems.sorted { $0.key < $1.key }.map { key, problem -> JSONValue in
                    ["source": .string(key), "version_id": problem.versionID.map(JSONValue.string) ?? .null, "message": .string(problem.message)]
                }
                return Self.json(
                    [
                        "status": loaded ? "ready" : "loading", "database": .string(database.engine.rawValue), "node": .string(realtime.nodeID),
                        "transit": ["loaded": .bool(loaded), "problems": .array(problems)],
                    ], status: loaded ? .ok : .serviceUnavailable)
            } catch {
                context.logger.warning("readiness check failed", metadata: ["error": "\(String(reflecting: error))"])
                return Self.json(
                    ["status": "unavailable", "database": .string(database.engine.rawValue), "node": .string(realtime.nodeID)], status: .serviceUnavailable)
            }
        }
        router.get("/metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(
                    byteBuffer: ByteBuffer(
                        string: metrics.render() + realtime.renderMetrics() + notifications.renderMetrics() + dispatch.renderMetrics()
                            + trips.renderMetrics() + transit.renderMetrics()))
            )
        }
    }

    static func json(_ value: JSONValue, status: HTTPResponse.Status) -> Response {
        let body = (try? JSONEncoder().encode(value)) ?? Data()
        return Envelope.jsonResponse(body, status: status, headers: [:])
    }

    static let operations: [APIOperation] = [
        APIOperation(
            "GET", "/healthz", summary: "Liveness: the process is up", tag: "operations", access: .public_,
            response: Schema.object(["status": Schema.enumeration(["ok"])]), enveloped: false),
        APIOperation(
            "GET", "/readyz", summary: "Readiness: the database answers and the transit feeds are loaded (and which node answered: its id in the cluster)",
            description:
                "`loading` (503) while the node loads its feeds after start; `transit.problems` names stored data it could not load (it serves on without it).",
            tag: "operations", access: .public_,
            response: Schema.object([
                "status": Schema.enumeration(["ready", "loading", "unavailable"]), "database": Schema.string(), "node": Schema.string(),
                "transit": Schema.object([
                    "loaded": ["type": "boolean"],
                    "problems": Schema.array(
                        Schema.object(["source": Schema.string(), "version_id": ["type": ["string", "null"]], "message": Schema.string()])),
                ]),
            ]),
            enveloped: false, errors: [503: "The database does not answer, or the feeds are still loading"]),
        APIOperation(
            "GET", "/metrics", summary: "Prometheus metrics (text exposition format)", tag: "operations", access: .public_,
            response: Schema.string(), enveloped: false, contentType: "text/plain"),
    ]
}
