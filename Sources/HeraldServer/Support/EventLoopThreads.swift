import HeraldCore
import NIOCore

/// How many event-loop threads a Herald process runs: `server.threads` when set, else one
/// per CPU the process may run on (`CPUAffinity`), else NIO's own count.
public enum EventLoopThreads {
    /// Sizes NIO's shared event-loop group. Call it before anything touches the event loops:
    /// the group is created once, on first use, and keeps its size.
    public static func configure(_ configured: Int? = nil) {
        NIOSingletons.groupLoopCountSuggestion = configured ?? CPUAffinity.count ?? System.coreCount
    }
}
