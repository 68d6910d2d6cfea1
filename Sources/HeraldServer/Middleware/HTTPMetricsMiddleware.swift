import Hummingbird

/// Counts requests and times them by method, route template and status.
///
/// Why the route template (`/api/v1/jobs/{id}`) and not the path: one series per route,
/// not one per job id. Unmatched paths share the `NotFound` series.
struct HTTPMetricsMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let metrics: HeraldMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            record(request, context: context, status: Int(response.status.code), start: start)
            return response
        } catch {
            record(request, context: context, status: (error as? any HTTPResponseError).map { Int($0.status.code) } ?? 500, start: start)
            throw error
        }
    }

    private func record(_ request: Request, context: Context, status: Int, start: ContinuousClock.Instant) {
        metrics.recordRequest(
            method: request.method.rawValue, route: context.endpointPath ?? "NotFound",
            status: status, duration: ContinuousClock.now - start
        )
    }
}
