import Foundation
import HeraldCore
import HeraldStorage
import SQLKit

/// Records idempotency keys so a retried POST does its work once.
///
/// Why a row claimed with `INSERT … ON CONFLICT DO NOTHING RETURNING`: of two requests with
/// one key, on one node or two, exactly one inserts the row and runs; the other sees the
/// row and waits for its response. A `pending` row whose node died is taken over by one
/// retry through a conditional `UPDATE … RETURNING` once its lock is older than the timeout.
package struct IdempotencyStore: Sendable {
    package init() {}

    package enum BeginResult: Sendable, Equatable {
        /// This request owns the key and must run, then `complete` or `release` it. `lockedAt`
        /// names this ownership: a completion for an older one (taken over) is refused.
        case acquired(lockedAt: Int64)
        /// The first request finished: answer with its response.
        case replay(StoredResponse)
        /// The key was used for a different request.
        case mismatch
        /// Another request with this key is running.
        case inProgress
    }

    package func begin(
        _ db: any SQLDatabase, scope: String, key: String, requestHash: String,
        now: Int64, ttlMilliseconds: Int64, lockTimeoutMilliseconds: Int64
    ) async throws -> BeginResult {
        try await db.raw(
            "DELETE FROM idempotency_keys WHERE scope = \(bind: scope) AND idem_key = \(bind: key) AND expires_at <= \(bind: now)"
        ).run()
        let inserted = try await db.raw(
            """
            INSERT INTO idempotency_keys (scope, idem_key, request_hash, state, locked_at, created_at, expires_at)
            VALUES (\(bind: scope), \(bind: key), \(bind: requestHash), 'pending', \(bind: now), \(bind: now), \(bind: now + ttlMilliseconds))
            ON CONFLICT (scope, idem_key) DO NOTHING
            RETURNING idem_key
            """
        ).first()
        if inserted != nil { return .acquired(lockedAt: now) }

        guard
            let row = try await db.raw(
                "SELECT request_hash, state, status_code, response_headers, response_body, locked_at FROM idempotency_keys WHERE scope = \(bind: scope) AND idem_key = \(bind: key)"
            ).first()
        else {
            // Deleted between our insert and select (its owner failed): the caller retries.
            return .inProgress
        }
        guard try row.decode(column: "request_hash", as: String.self) == requestHash else { return .mismatch }
        if try row.decode(column: "state", as: String.self) == "complete" {
            let status = try row.decode(column: "status_code", as: Int.self)
            let headersJSON = try row.decode(column: "response_headers", as: String?.self) ?? "{}"
            let headers = (try? JSONDecoder().decode([String: String].self, from: Data(headersJSON.utf8))) ?? [:]
            let body = Data(base64Encoded: try row.decode(column: "response_body", as: String?.self) ?? "") ?? Data()
            return .replay(StoredResponse(status: status, headers: headers, body: body))
        }
        let lockedAt = try row.decode(column: "locked_at", as: Int64.self)
        if lockedAt <= now - lockTimeoutMilliseconds {
            let taken = try await db.raw(
                """
                UPDATE idempotency_keys SET locked_at = \(bind: now)
                WHERE scope = \(bind: scope) AND idem_key = \(bind: key) AND state = 'pending' AND locked_at = \(bind: lockedAt)
                RETURNING idem_key
                """
            ).first()
            if taken != nil { return .acquired(lockedAt: now) }
        }
        return .inProgress
    }

    /// Stores the owner's response; later requests with the key replay it until it expires.
    ///
    /// Only the owner named by `lockedAt` completes: false when the key was taken over by a
    /// retry (this owner looked dead) or is complete already. Run inside the transaction of
    /// the request's work, a false answer is the signal to roll that work back.
    @discardableResult
    package func complete(_ db: any SQLDatabase, scope: String, key: String, lockedAt: Int64, response: StoredResponse) async throws -> Bool {
        let headers = String(decoding: try JSONEncoder().encode(response.headers), as: UTF8.self)
        let updated = try await db.raw(
            """
            UPDATE idempotency_keys
            SET state = 'complete', status_code = \(bind: response.status), response_headers = \(bind: headers),
                response_body = \(bind: response.body.base64EncodedString())
            WHERE scope = \(bind: scope) AND idem_key = \(bind: key) AND state = 'pending' AND locked_at = \(bind: lockedAt)
            RETURNING idem_key
            """
        ).first()
        return updated != nil
    }

    /// Forgets a pending key whose request failed, so a retry can run it again.
    package func release(_ db: any SQLDatabase, scope: String, key: String) async throws {
        try await db.raw(
            "DELETE FROM idempotency_keys WHERE scope = \(bind: scope) AND idem_key = \(bind: key) AND state = 'pending'"
        ).run()
    }

    /// Deletes expired keys; returns how many.
    @discardableResult
    package func purgeExpired(_ db: any SQLDatabase, now: Int64) async throws -> Int {
        let rows = try await db.raw("DELETE FROM idempotency_keys WHERE expires_at <= \(bind: now) RETURNING idem_key").all()
        return rows.count
    }
}
