import Foundation
import HeraldCore
import ServiceLifecycle
import Synchronization

/// Disconnects Socket.IO sockets whose token has expired, as the native protocol does.
///
/// Why: a token is checked when a socket connects, and a socket can stay open for days; without
/// this, a revoked or expired credential kept receiving a user's events for as long as the
/// connection lived. Each expired socket gets `error {code: "TOKEN_EXPIRED", message}` and a
/// server-side DISCONNECT (the client's reason `io server disconnect`: it refreshes the token
/// and connects again, the rideshare design's recovery for "auth token expired"). Sockets are checked once
/// a second; an entry whose socket closed is dropped on the next sweep if no close path
/// removed it first, so the registry never outlives its sockets by more than a second.
public final class SocketIOTokenExpiry: Service, Sendable {
    private let sockets = Mutex<[UInt64: SocketIOSocket]>([:])
    let clock: any HeraldClock

    public init(clock: any HeraldClock) {
        self.clock = clock
    }

    func track(_ socket: SocketIOSocket) {
        guard socket.identity != nil else { return }
        sockets.withLock { $0[socket.connectionID] = socket }
    }

    func forget(_ socket: SocketIOSocket) {
        _ = sockets.withLock { $0.removeValue(forKey: socket.connectionID) }
    }

    /// Sockets being watched (a gauge for tests and metrics).
    public var tracked: Int { sockets.withLock { $0.count } }

    /// Disconnects the sockets expired at `now` (seconds since 1970); returns how many.
    @discardableResult
    public func sweep(now: TimeInterval) -> Int {
        let expired = sockets.withLock { sockets -> [SocketIOSocket] in
            var expired: [SocketIOSocket] = []
            for (id, socket) in sockets {
                if !socket.isConnected {
                    sockets.removeValue(forKey: id)
                } else if let identity = socket.identity, identity.expiresAt <= now {
                    sockets.removeValue(forKey: id)
                    expired.append(socket)
                }
            }
            return expired
        }
        for socket in expired {
            socket.emit(
                "error", [.object(["code": .string(ErrorCode.tokenExpired.rawValue), "message": .string("Your token expired; reconnect with a fresh one.")])])
            socket.disconnect()
        }
        return expired.count
    }

    public func run() async throws {
        await PeriodicLoop.run(every: .seconds(1), start: .afterInterval, cancellingRound: false) {
            self.sweep(now: self.clock.now().timeIntervalSince1970)
        }
    }
}
