import HeraldCore
import HeraldNotifications
import Logging
import Synchronization

/// Publishes the boards that departures Live Activities and channels show, after each
/// overlay rebuild (`ServedFeeds.rebuildOverlays`).
///
/// Why apart from the served feeds: publishing reads the followed stops and writes Live
/// Activity changes (the notifications module's), which has nothing to do with holding the
/// snapshot; the holder only hands it each new snapshot.
final class DepartureBoards: Sendable {
    /// Where departures Live Activities and channels get the boards (nil: not published).
    let liveActivities: LiveActivityService?
    let logger: Logger
    let publishedBoards = PublishedBoards()

    init(liveActivities: LiveActivityService?, logger: Logger) {
        self.liveActivities = liveActivities
        self.logger = logger
    }

    /// Publishes the board of every stop that departures activities or channels follow; runs
    /// after each overlay rebuild (a realtime message, and at least once a minute as time
    /// moves on). An unchanged board is no change, so it sends nothing.
    func publish(snapshot: TransitSnapshot, now: Int64) async {
        guard let liveActivities, liveActivities.config.enabled else { return }
        let stops: [String]
        do {
            stops = try await liveActivities.followedSubjects(kind: .departures)
        } catch {
            logger.warning("reading the followed stops failed", metadata: ["error": "\(String(reflecting: error))"])
            return
        }
        let boards = stops.compactMap { id -> (String, [String: JSONValue])? in
            guard let (feed, stop) = snapshot.stop(id) else { return nil }
            return (id, DepartureActivity.content(feed, stop: stop, now: now / 1000))
        }
        let changes = publishedBoards.changed(boards, now: now).map { id, board in
            LiveActivityChange(kind: .departures, subjectID: id, patch: board, asOf: now)
        }
        // Together, so they share commits (`LiveActivityService.publish` batches what arrives at once).
        for start in stride(from: 0, to: changes.count, by: 256) {
            await withTaskGroup(of: Void.self) { group in
                for change in changes[start..<min(changes.count, start + 256)] {
                    group.addTask { await liveActivities.publish(change) }
                }
            }
        }
    }
}

/// The boards this node published last, so a rebuild publishes only the stops whose board
/// changed instead of reading every followed row to find it unchanged.
///
/// Why a refresh anyway: a publish that failed (it is logged, not retried) or a newer board
/// another node published meanwhile is corrected within `refreshMs`, when the board goes
/// again (unchanged rows are no change, so that costs reads, no pushes).
final class PublishedBoards: Sendable {
    static let refreshMs: Int64 = 300_000
    private let boards = Mutex<[String: (board: [String: JSONValue], at: Int64)]>([:])

    /// The boards to publish now; forgets stops no longer followed.
    func changed(_ current: [(String, [String: JSONValue])], now: Int64) -> [(String, [String: JSONValue])] {
        boards.withLock { published in
            var next: [String: (board: [String: JSONValue], at: Int64)] = [:]
            var changed: [(String, [String: JSONValue])] = []
            for (id, board) in current {
                if let last = published[id], last.board == board, now - last.at < Self.refreshMs {
                    next[id] = last
                } else {
                    next[id] = (board, now)
                    changed.append((id, board))
                }
            }
            published = next
            return changed
        }
    }
}
