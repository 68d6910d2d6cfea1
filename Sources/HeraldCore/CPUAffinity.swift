import Foundation

/// The CPUs this process may run on.
///
/// Why not `System.coreCount`: NIO counts the machine's CPUs (or a cgroup's quota), not the
/// process's affinity mask, so a server started under `taskset` or a CPU-pinning orchestrator
/// would start one event loop per CPU of the machine, all on the CPUs it was given, taking
/// turns with each other and with the task pool.
public enum CPUAffinity {
    /// CPUs in the affinity mask (`Cpus_allowed` in `/proc/self/status`); nil where it
    /// cannot be read.
    public static var count: Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return count(status: status)
    }

    /// The CPUs in a `/proc/<pid>/status` text's `Cpus_allowed:` mask (hex, in groups of 32 bits).
    static func count(status: String) -> Int? {
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else { return nil }
        var cpus = 0
        for character in line.dropFirst("Cpus_allowed:".count) where character != "," && character != " " && character != "\t" {
            guard let nibble = character.hexDigitValue else { return nil }
            cpus += nibble.nonzeroBitCount
        }
        return cpus > 0 ? cpus : nil
    }
}
