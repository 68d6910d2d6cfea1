import Foundation
import HeraldCore
import Synchronization

/// The last server errors (5xx answers), for the operations console: when, which route,
/// the code and the request id to look up in the logs. Bounded; the oldest go first.
///
/// Why not the error's detail: the console is a client too, and internal detail stays in
/// the log (found by the request id).
final class RecentErrors: Sendable {
    struct Entry: Sendable {
        let at: Int64
        let method: String
        let path: String
        let status: Int
        let code: String
        let requestID: String
    }

    private let entries = Mutex<[Entry]>([])
    let capacity: Int

    init(capacity: Int = 50) {
        self.capacity = capacity
    }

    func record(_ entry: Entry) {
        entries.withLock { entries in
            entries.append(entry)
            if entries.count > capacity { entries.removeFirst(entries.count - capacity) }
        }
    }

    /// Newest first.
    var json: [JSONValue] {
        entries.withLock { $0 }.reversed().map { entry in
            [
                "at": .string(Timestamp.string(epochMilliseconds: entry.at)), "method": .string(entry.method), "path": .string(entry.path),
                "status": .number(Double(entry.status)), "code": .string(entry.code), "request_id": .string(entry.requestID),
            ]
        }
    }
}
