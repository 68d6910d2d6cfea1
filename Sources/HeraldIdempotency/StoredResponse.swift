import Foundation

/// A response kept for replay to a retried request with the same `Idempotency-Key`.
public struct StoredResponse: Sendable, Equatable {
    public var status: Int
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String], body: Data) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
