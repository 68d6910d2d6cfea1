import Foundation
import HTTPTypes
import HeraldCore
import Hummingbird
import Logging

/// Gives every request an id (the client's `X-Request-ID` when it is sane, else a new one),
/// puts it on the request's logger so every log line carries it, echoes it in the response,
/// and writes one access-log line per request.
struct RequestIDMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let trustForwardedFor: Bool

    static let header = HTTPField.Name("X-Request-ID")!
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        let id = request.headers[Self.header].flatMap { Self.isAcceptable($0) ? $0 : nil } ?? Identifier.make("req", length: 20)
        context.requestID = id
        context.logger[metadataKey: "request_id"] = .string(id)
        context.logger[metadataKey: "hb.request.id"] = nil
        context.clientIP = clientIP(request, context: context)

        let start = ContinuousClock.now
        var response = try await next(request, context)
        response.headers[Self.header] = id
        let elapsed = ContinuousClock.now - start
        context.logger.info(
            "request",
            metadata: [
                "method": .string(request.method.rawValue),
                "path": .string(request.uri.path),
                "status": .stringConvertible(response.status.code),
                "duration_ms": .string(String(format: "%.2f", Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)),
            ]
        )
        return response
    }

    /// 1–128 characters from a safe set: the id lands in logs and headers verbatim.
    static func isAcceptable(_ id: String) -> Bool {
        (1...128).contains(id.utf8.count)
            && id.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2D || byte == 0x5F || byte == 0x2E || byte == 0x3A
            }
    }

    private func clientIP(_ request: Request, context: Context) -> String {
        if trustForwardedFor, let forwarded = request.headers[Self.forwardedFor],
            let first = forwarded.split(separator: ",").first.map({ String($0).trimmingCharacters(in: .whitespaces) }), !first.isEmpty, first.count <= 64
        {
            return first
        }
        return context.remoteAddress?.ipAddress ?? "unknown"
    }
}
