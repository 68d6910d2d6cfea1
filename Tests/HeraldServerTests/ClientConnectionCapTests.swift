import NIOCore
import Testing

@testable import HeraldServer

/// One client's connections are counted by address (IPv6 by /64), up to its cap.
@Suite struct ClientConnectionCapTests {
    @Test func aClientIsCappedAndOthersAreNot() throws {
        let cap = ClientConnectionCap(limit: 3)
        let one = try #require(ClientConnectionCap.Client(try SocketAddress(ipAddress: "203.0.113.9", port: 40_000)))
        let samePortless = try #require(ClientConnectionCap.Client(try SocketAddress(ipAddress: "203.0.113.9", port: 40_001)))
        let mapped = try #require(ClientConnectionCap.Client(try SocketAddress(ipAddress: "::ffff:203.0.113.9", port: 1)))
        let other = try #require(ClientConnectionCap.Client(try SocketAddress(ipAddress: "203.0.113.10", port: 40_000)))
        #expect(one == samePortless && one == mapped)
        #expect(cap.admit(one) && cap.admit(samePortless) && cap.admit(mapped))
        #expect(!cap.admit(one))
        #expect(cap.admit(other))
        cap.release(one)
        #expect(cap.admit(one))
        #expect(cap.connections(of: one) == 3)
        for _ in 0..<5 { cap.release(other) }
        #expect(cap.connections(of: other) == 0)
    }

    @Test func anIPv6HostIsItsSlash64() throws {
        let a = try #require(ClientConnectionCap.Client(try SocketAddress(ipAddress: "2001:db8:1:2::1", port: 1)))
        let b = try #require(ClientConnectionCap.Client(try SocketAddress(ipAddress: "2001:db8:1:2:ffff::9", port: 1)))
        let c = try #require(ClientConnectionCap.Client(try SocketAddress(ipAddress: "2001:db8:1:3::1", port: 1)))
        #expect(a == b)
        #expect(a != c)
    }

    @Test func theDefaultIsAQuarterOfTheNodeAndNoneBehindAProxy() {
        #expect(ClientConnectionCap.resolve(configured: nil, connectionLimit: 870, behindProxy: false) == 217)
        #expect(ClientConnectionCap.resolve(configured: nil, connectionLimit: 10, behindProxy: false) == 8)
        #expect(ClientConnectionCap.resolve(configured: nil, connectionLimit: 870, behindProxy: true) == nil)
        #expect(ClientConnectionCap.resolve(configured: 50, connectionLimit: 870, behindProxy: true) == 50)
        #expect(ClientConnectionCap.resolve(configured: 0, connectionLimit: 870, behindProxy: false) == nil)
    }

    @Test func aBodyDeadlineGrowsWithWhatArrivedAndIdleStartsNow() {
        let limits = HTTPConnectionDeadlines.Limits(idleTimeout: .seconds(75), bodyTimeout: .seconds(30), minimumBodyRate: 1000)
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)
        let now = start + .seconds(10)
        #expect(HTTPConnectionDeadlines.deadline(of: .readingBody(started: start, received: 0), limits: limits, now: now) == start + .seconds(30))
        #expect(HTTPConnectionDeadlines.deadline(of: .readingBody(started: start, received: 2_500), limits: limits, now: now) == start + .milliseconds(32_500))
        #expect(HTTPConnectionDeadlines.deadline(of: .responding, limits: limits, now: now) == nil)
        #expect(HTTPConnectionDeadlines.deadline(of: .idle, limits: limits, now: now) == now + .seconds(75))
    }
}
