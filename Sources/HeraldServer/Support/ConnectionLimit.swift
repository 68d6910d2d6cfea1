import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How many client connections the server accepts at once.
///
/// Why a limit at all: every socket is a file descriptor, and a Swift process that runs out
/// of them can die inside the concurrency runtime (libdispatch's worker-pool monitor traps
/// when it cannot open `/proc`; see BENCHMARKS.md, realtime problem 1). With the limit
/// reached the server stops accepting; new clients wait in the listen backlog (or are
/// refused by the kernel when it is full) and everyone already connected keeps working.
public struct ConnectionLimit: Equatable, Sendable {
    /// Descriptors kept back from clients: the database pool, the listening socket, push
    /// provider connections, the log and database files, the event loops' wake pipes, the
    /// runtime's own.
    public var reserve: Int
    public var limit: Int

    public init(reserve: Int, limit: Int) {
        self.reserve = reserve
        self.limit = limit
    }

    /// - Parameters:
    ///   - configured: `server.max_connections`, when set (still capped by the descriptors).
    ///   - descriptors: the process's file-descriptor limit (soft `RLIMIT_NOFILE`).
    ///   - databaseConnections: the PostgreSQL pool's and background lane's sizes together.
    public static func resolve(configured: Int?, descriptors: Int, databaseConnections: Int) -> ConnectionLimit {
        let reserve = 128 + databaseConnections
        let available = max(1, descriptors - reserve)
        return ConnectionLimit(reserve: reserve, limit: min(configured ?? available, available))
    }

    /// Makes the listening socket accept one connection per read, so the limit is exact.
    ///
    /// Why: the limit is checked before each read of the listening socket, and NIO accepts up
    /// to 4 connections in one read, so the last read before the limit could pass it by 3.
    /// Accepting costs little next to a connection's HTTP or WebSocket handshake.
    public static func acceptOneAtATime(_ listener: any Channel) async {
        try? await listener.setOption(ChannelOptions.maxMessagesPerRead, value: 1)
    }

    /// The listen backlog: the kernel's own maximum (`net.core.somaxconn`), as Go's net
    /// package asks for.
    ///
    /// Why not the usual 256: after a network blip thousands of clients reconnect at once, and
    /// a SYN that finds the accept queue full is dropped; its client tries again only after 1,
    /// then 3, then 7 seconds. A queue as long as the kernel allows holds a whole storm while
    /// the server accepts it.
    public static func listenBacklog(somaxconnPath: String = "/proc/sys/net/core/somaxconn") -> Int {
        guard let text = try? String(contentsOfFile: somaxconnPath, encoding: .utf8),
            let value = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), value > 0
        else { return 4096 }
        return min(value, 65_535)
    }

    /// Raises the soft descriptor limit to the hard one (as Go's runtime does) and returns it:
    /// distributions default to a soft 1,024, far below what a realtime server holds.
    public static func raiseDescriptorLimit() -> Int {
        var limits = rlimit()
        guard getrlimit(resourceNoFile, &limits) == 0 else { return 1024 }
        if limits.rlim_cur < limits.rlim_max {
            var raised = limits
            raised.rlim_cur = limits.rlim_max
            if setrlimit(resourceNoFile, &raised) == 0 { limits = raised }
        }
        // RLIM_INFINITY (or anything absurd) still means a finite table in practice.
        return Int(clamping: min(limits.rlim_cur, 1 << 24))
    }

    #if canImport(Glibc)
        private static let resourceNoFile = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
        private static let resourceNoFile = RLIMIT_NOFILE
    #endif
}
