import Foundation
import Synchronization

/// The source of "now" for every rule where expiry matters (tokens, rate limits,
/// idempotency windows, presence TTLs, offer deadlines).
///
/// Why: tests move time by hand instead of sleeping, so expiry rules are checked exactly.
public protocol HeraldClock: Sendable {
    func now() -> Date
}

public struct SystemClock: HeraldClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// A clock that only moves when told to; for tests.
public final class ManualClock: HeraldClock {
    private let current: Mutex<Date>

    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Mutex(start)
    }

    public func now() -> Date { current.withLock { $0 } }

    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    public func set(_ date: Date) {
        current.withLock { $0 = date }
    }
}

extension Date {
    /// Milliseconds since the Unix epoch: how Herald stores instants in both databases.
    public var epochMilliseconds: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }

    public init(epochMilliseconds: Int64) {
        self.init(timeIntervalSince1970: Double(epochMilliseconds) / 1000)
    }
}
