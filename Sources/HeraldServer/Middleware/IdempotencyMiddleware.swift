import Crypto
import Foundation
import HTTPTypes
import HeraldCore
import HeraldIdempotency
import HeraldStorage
import Hummingbird
import Logging

/// Makes a POST with an `Idempotency-Key` safe to retry.
///
/// The first request with a key runs and its response (below 500) is stored per caller and
/// key for the configured time; a retry with the same method, path and body gets that
/// response again (`Idempotent-Replayed: true`); the same key with a different request is
/// 422 `IDEMPOTENCY_KEY_REUSED`. A request that arrives while the first is still running
/// waits for it and replays its answer, so the work runs once; if it does not finish in
/// time the answer is 409 `IDEMPOTENCY_REQUEST_IN_PROGRESS`. A 5xx or a thrown error
/// releases the key so the retry can run the work again.
///
/// A route whose work would be repeated by a re-run (a send, a booking) stores its answer in
/// the transaction that commits the work (`IdempotentAnswer`), so a node that dies between
/// the commit and this middleware's own store cannot leave a key a retry runs again.
///
/// Keys belong to a caller: a request without credentials passes by the store untouched
/// (every POST under `/api/v1` needs a caller, so it is answered 401 by its route). Keyed by
/// address instead, a stranger's every new key cost a stored row, a reused key answered 422
/// before 401, and callers behind one proxy shared each other's stored 401s.
struct IdempotencyMiddleware: RouterMiddleware {
    typealias Context = HeraldRequestContext
    let database: any Database
    let config: IdempotencyConfig
    let maxBodyBytes: Int
    let clock: any HeraldClock
    let store = IdempotencyStore()

    static let header = HTTPField.Name("Idempotency-Key")!
    static let replayedHeader = HTTPField.Name("Idempotent-Replayed")!
    /// Response headers worth replaying; the rest (request id, rate limit counters) are per request.
    static let keptHeaders: [HTTPField.Name] = [.contentType, .location, .eTag]
    static let pollInterval: Duration = .milliseconds(25)

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method == .post, let key = request.headers[Self.header], let identity = context.identity else {
            return try await next(request, context)
        }
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E }) else {
            throw APIError.validation(field: "Idempotency-Key", "must be 1 to 255 printable ASCII characters without spaces")
        }
        var request = request
        let body = try await request.collectBody(upTo: maxBodyBytes)
        let hash = Self.requestHash(method: request.method.rawValue, path: request.uri.path, body: body)
        let scope = "user:\(identity.userID)"
        let deadline = ContinuousClock.now + .seconds(config.waitSeconds)

        while true {
            let now = clock.now().epochMilliseconds
            let ttl = Int64(config.ttlSeconds) * 1000
            let lockTimeout = Int64(config.lockTimeoutSeconds) * 1000
            let outcome = try await database.withConnection { [store] db in
                try await store.begin(
                    db, scope: scope, key: key, requestHash: hash, now: now,
                    ttlMilliseconds: ttl, lockTimeoutMilliseconds: lockTimeout
                )
            }
            switch outcome {
            case .acquired(let lockedAt):
                let claim = IdempotencyClaim(scope: scope, key: key, lockedAt: lockedAt)
                do {
                    return try await IdempotencyClaim.$current.withValue(claim) {
                        try await runOwned(request, context: context, claim: claim, next: next)
                    }
                } catch is IdempotencyKeyTakenOver {
                    // A retry took the key over while this request ran (it looked dead): its
                    // work rolled back, and the new owner's answer is the one to give.
                    continue
                }
            case .replay(let stored):
                return Self.replay(stored)
            case .mismatch:
                throw APIError(
                    status: 422, code: .idempotencyKeyReused,
                    message: "This Idempotency-Key was already used for a different request."
                )
            case .inProgress:
                guard ContinuousClock.now < deadline else {
                    throw APIError.conflict(
                        "A request with this Idempotency-Key is still in progress; retry later.",
                        code: .idempotencyRequestInProgress
                    )
                }
                try await CancellableSleep.sleep(for: Self.pollInterval)
            }
        }
    }

    private func runOwned(
        _ request: Request, context: Context, claim: IdempotencyClaim,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let (scope, key) = (claim.scope, claim.key)
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as IdempotencyKeyTakenOver {
            throw error
        } catch let error as APIError where error.status < 500 {
            // A refused request is an answer too: the retry gets the same refusal.
            let errorResponse = Envelope.errorResponse(error, context: context, clock: clock)
            return try await store(errorResponse, claim: claim)
        } catch {
            await releaseQuietly(scope: scope, key: key, logger: context.logger)
            throw error
        }
        // Stored already by the transaction that committed the work (`IdempotentAnswer`).
        if claim.answeredWithWork { return response }
        if response.status.code >= 500 {
            await releaseQuietly(scope: scope, key: key, logger: context.logger)
            return response
        }
        return try await store(response, claim: claim)
    }

    private func store(_ response: Response, claim: IdempotencyClaim) async throws -> Response {
        let (rebuilt, stored) = try await Self.collect(response)
        _ = try await database.withConnection { [store] db in
            try await store.complete(db, scope: claim.scope, key: claim.key, lockedAt: claim.lockedAt, response: stored)
        }
        return rebuilt
    }

    /// The response with its body read into memory, and the part of it kept for replay.
    static func collect(_ response: Response) async throws -> (Response, StoredResponse) {
        let collector = BodyCollector()
        try await response.body.write(CollectingBodyWriter(collector: collector))
        let bytes = collector.buffer
        var headers: [String: String] = [:]
        for name in Self.keptHeaders {
            if let value = response.headers[name] { headers[name.canonicalName] = value }
        }
        var rebuilt = response
        rebuilt.body = .init(byteBuffer: bytes)
        return (rebuilt, StoredResponse(status: Int(response.status.code), headers: headers, body: Data(buffer: bytes)))
    }

    private func releaseQuietly(scope: String, key: String, logger: Logger) async {
        do {
            try await database.withConnection { [store] db in try await store.release(db, scope: scope, key: key) }
        } catch {
            logger.error("releasing an idempotency key failed", metadata: ["error": "\(String(reflecting: error))"])
        }
    }

    static func replay(_ stored: StoredResponse) -> Response {
        var headers = HTTPFields()
        for (name, value) in stored.headers.sorted(by: { $0.key < $1.key }) {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        headers[replayedHeader] = "true"
        return Response(
            status: HTTPResponse.Status(code: stored.status), headers: headers,
            body: .init(byteBuffer: ByteBuffer(bytes: stored.body))
        )
    }

    /// Hashes the request. A JSON body is hashed in a canonical form (sorted keys, no
    /// insignificant whitespace), so a client that re-encodes the same object for its retry —
    /// Swift's JSONEncoder and many others do not keep key order — is still recognised.
    static let canonicalEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func requestHash(method: String, path: String, body: ByteBuffer) -> String {
        var hasher = SHA256()
        hasher.update(data: Data("\(method) \(path)\n".utf8))
        let bytes = Data(buffer: body)
        if let value = try? JSONDecoder().decode(JSONValue.self, from: bytes), let canonical = try? Self.canonicalEncoder.encode(value) {
            hasher.update(data: canonical)
        } else {
            hasher.update(data: bytes)
        }
        return hasher.finalize().map { String(format: "%02x", $0) }.joined()
    }
}

/// Holds the bytes a `CollectingBodyWriter` saw; a class because the writer is consumed.
final class BodyCollector {
    var buffer = ByteBuffer()
}

struct CollectingBodyWriter: ResponseBodyWriter {
    let collector: BodyCollector

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        collector.buffer.writeBuffer(&buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
