import Foundation
import HeraldCore
import Testing

@testable import HeraldRealtime

/// The heartbeat sweep, driven by hand with a manual clock.
@Suite struct EngineSweepTests {
    private static func engine(_ clock: ManualClock) -> EngineServer {
        var configuration = EngineConfiguration()
        configuration.pingInterval = .milliseconds(1000)
        configuration.pingTimeout = .milliseconds(500)
        return EngineServer(configuration: configuration, clock: clock, logger: testLogger) { _ in }
    }

    private static func open(_ engine: EngineServer) async throws -> EngineSession {
        let reply = await engine.handlePolling(method: "GET", query: ["EIO": "4", "transport": "polling"], body: nil)
        #expect(reply.status == 200)
        let handshake = try JSONDecoder().decode(JSONValue.self, from: Data(reply.body.dropFirst().utf8))
        let sid = try #require(handshake["sid"]?.stringValue)
        return try #require(engine.session(sid))
    }

    @Test func aSessionClosedByItsUpperLayerLeavesTheTableAtTheNextSweep() async throws {
        let clock = ManualClock(Date())
        let engine = Self.engine(clock)
        let closing = try await Self.open(engine)
        let kept = try await Self.open(engine)
        await closing.close(.parseError)
        #expect(engine.sessionCount == 2)
        await engine.sweep()
        #expect(engine.sessionCount == 1)
        #expect(engine.session(closing.sid) == nil)
        #expect(engine.session(kept.sid) === kept)
        await engine.sweep()
        #expect(engine.sessionCount == 1)
    }

    @Test func sessionsArePingedWhenDueAndDroppedWhenThePongIsLate() async throws {
        let clock = ManualClock(Date())
        let engine = Self.engine(clock)
        let quiet = try await Self.open(engine)
        let answering = try await Self.open(engine)
        await engine.sweep()
        #expect(quiet.queue.isEmpty && answering.queue.isEmpty)  // not due yet

        clock.advance(by: 1.1)
        await engine.sweep()
        #expect(quiet.queue.drain() == [.text("2")])
        #expect(answering.queue.drain() == [.text("2")])
        await engine.sweep()
        #expect(quiet.queue.isEmpty)  // one ping per interval, not one per sweep

        // One answers; after the pong timeout the other is dropped.
        #expect(await answering.receive(.pong(""), now: engine.now))
        clock.advance(by: 0.6)
        await engine.sweep()
        #expect(quiet.isClosed)
        #expect(!answering.isClosed)
        #expect(engine.sessionCount == 1)
        #expect(engine.session(answering.sid) === answering)
    }
}
