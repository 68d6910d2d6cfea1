import Synchronization

/// Tokens this verifier has already accepted, with the identity they carry.
///
/// Why: a backend publishes with the same service token thousands of times a second and an app
/// sends the same token with every request, while checking a signature, decoding the claims
/// with `JSONDecoder` and validating them cost about 8 % of a node's CPU on many small
/// publishes (BENCHMARKS.md, issue 24). The answer for a given token string only changes with
/// time (`exp`), which is checked again on every hit, and with the keys: when a key leaves a
/// provider's JWKS (`RemoteJWKS`) every remembered token is forgotten. Only tokens that passed every check are kept, so a peer cannot fill it with
/// garbage; it is bounded in bytes and starts afresh when full.
final class VerifiedTokenCache: Sendable {
    private struct State {
        var identities: [String: Identity] = [:]
        var bytes = 0
    }

    private let state = Mutex(State())
    /// Token bytes kept at most (4 MiB: hundreds of thousands of typical tokens).
    let limitBytes: Int

    init(limitBytes: Int = 4 << 20) {
        self.limitBytes = limitBytes
    }

    func identity(for token: String) -> Identity? {
        state.withLock { $0.identities[token] }
    }

    func remember(_ identity: Identity, for token: String) {
        state.withLock { state in
            if state.bytes + token.utf8.count > limitBytes {
                state.identities.removeAll(keepingCapacity: true)
                state.bytes = 0
            }
            if state.identities.updateValue(identity, forKey: token) == nil { state.bytes += token.utf8.count }
        }
    }

    func forgetAll() {
        state.withLock { state in
            state.identities.removeAll()
            state.bytes = 0
        }
    }

    func forget(_ token: String) {
        state.withLock { state in
            if state.identities.removeValue(forKey: token) != nil { state.bytes -= token.utf8.count }
        }
    }
}
