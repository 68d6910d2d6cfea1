import HeraldCore
import Testing

@testable import HeraldTransit

/// Which followed stops' boards a rebuild publishes.
@Suite struct PublishedBoardsTests {
    @Test func onlyChangedBoardsGoUntilTheRefresh() {
        let boards = PublishedBoards()
        let now: Int64 = 1_800_000_000_000
        let a: [String: JSONValue] = ["departures": ["T1"]]
        let b: [String: JSONValue] = ["departures": ["T2"]]
        #expect(boards.changed([("S1", a), ("S2", a)], now: now).map(\.0) == ["S1", "S2"])
        // Unchanged: nothing; S2's board moved: S2 only.
        #expect(boards.changed([("S1", a), ("S2", a)], now: now + 1_000).isEmpty)
        #expect(boards.changed([("S1", a), ("S2", b)], now: now + 2_000).map(\.0) == ["S2"])
        // A stop followed again after it was not is published again.
        #expect(boards.changed([("S2", b)], now: now + 3_000).isEmpty)
        #expect(boards.changed([("S1", a), ("S2", b)], now: now + 4_000).map(\.0) == ["S1"])
        // An unchanged board goes again after the refresh interval (a lost publish heals).
        #expect(boards.changed([("S1", a), ("S2", b)], now: now + 2_000 + PublishedBoards.refreshMs).map(\.0) == ["S2"])
    }
}
