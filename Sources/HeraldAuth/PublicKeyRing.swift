import JWTKit
import Synchronization

/// The asymmetric keys tokens are checked against, replaced whole when the provider's set
/// changes (`RemoteJWKS`) and never changed when they come from a file.
///
/// Why replaced whole and not edited: a verification in flight keeps the collection it
/// started with, so no token is ever checked against half of a rotation.
final class PublicKeyRing: Sendable {
    struct Keys: Sendable {
        var collection: JWTKeyCollection
        /// The `kid`s of the set, to tell an unknown key (fetch again) from a bad signature.
        var kids: Set<String>
    }

    private let state: Mutex<Keys?>

    init(_ keys: Keys? = nil) {
        state = Mutex(keys)
    }

    var current: Keys? { state.withLock { $0 } }

    /// Puts `keys` in force; true when a key of the old set is gone (tokens accepted with it
    /// must be checked again).
    @discardableResult
    func replace(with keys: Keys) -> Bool {
        state.withLock { current in
            defer { current = keys }
            guard let old = current else { return false }
            return !old.kids.isSubset(of: keys.kids)
        }
    }
}
