import HeraldBuildInfo
import HeraldServer

/// What `herald --version` and the start-up line say: the release, and the commit when
/// `scripts/release` built the binary. Operators read it to tell which build a node runs.
enum BuildVersion {
    static let commit: String? = {
        let stamped = String(cString: herald_build_commit())
        return stamped.isEmpty ? nil : stamped
    }()

    /// One token, for the start-up line that scripts parse: `0.1.0`, or `0.1.0+<commit>`
    /// (semantic versioning's build metadata).
    static var token: String {
        guard let commit else { return HeraldApplication.version }
        return "\(HeraldApplication.version)+\(commit)"
    }

    static var description: String {
        guard let commit else { return "\(HeraldApplication.version) (development build)" }
        return "\(HeraldApplication.version) (commit \(commit))"
    }
}
