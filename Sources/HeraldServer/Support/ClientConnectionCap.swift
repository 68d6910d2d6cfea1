import NIOCore
import Synchronization

/// How many connections one client (an IPv4 address, an IPv6 /64) may hold open at once.
///
/// Why: the node's connection limit (`server.max_connections`) protects its descriptors,
/// but one client could take all of them and every other user would be refused. With a
/// cap per client an attacker holding sockets open takes at most its share.
///
/// A node behind a proxy (`server.trust_forwarded_for`) sees every client as the proxy's
/// address, so there the cap is off unless configured: limit connections at the proxy.
final class ClientConnectionCap: Sendable {
    /// An address without its port; IPv6 by its /64 (a host usually holds a whole /64).
    struct Client: Hashable, Sendable {
        let high: UInt64
        let low: UInt64
        let isV6: Bool

        init?(_ address: SocketAddress?) {
            switch address {
            case .v4(let v4)?:
                high = 0
                low = UInt64(UInt32(bigEndian: v4.address.sin_addr.s_addr))
                isV6 = false
            case .v6(let v6)?:
                let bytes = withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
                // An IPv4-mapped address (::ffff:a.b.c.d) is that IPv4 client.
                if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                    high = 0
                    low = bytes[12..<16].reduce(0) { $0 << 8 | UInt64($1) }
                    isV6 = false
                } else {
                    high = bytes[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
                    low = 0
                    isV6 = true
                }
            default:
                return nil
            }
        }
    }

    let limit: Int
    private let open = Mutex<[Client: Int]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    /// The cap a node uses: the configured one (0 turns it off), else a quarter of the
    /// node's connection limit, and none behind a trusted proxy.
    static func resolve(configured: Int?, connectionLimit: Int, behindProxy: Bool) -> Int? {
        if let configured { return configured > 0 ? configured : nil }
        if behindProxy { return nil }
        return max(8, connectionLimit / 4)
    }

    /// Takes a slot for `client`; false when it already holds `limit` connections.
    func admit(_ client: Client) -> Bool {
        open.withLock { open in
            let count = open[client, default: 0]
            guard count < limit else { return false }
            open[client] = count + 1
            return true
        }
    }

    func release(_ client: Client) {
        open.withLock { open in
            guard let count = open[client] else { return }
            if count <= 1 { open[client] = nil } else { open[client] = count - 1 }
        }
    }

    func connections(of client: Client) -> Int {
        open.withLock { $0[client, default: 0] }
    }
}
