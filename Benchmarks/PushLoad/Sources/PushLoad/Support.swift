import CMallocInfo
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A JSON value for the one-line summaries (keys keep their order), as in SocketIOLoad.
enum JSON: Sendable {
    case int(Int)
    case double(Double)
    case string(String)
    case bool(Bool)
    case null
    case object([(String, JSON)])
    case array([JSON])

    var text: String {
        switch self {
        case .int(let v): return String(v)
        case .double(let v):
            guard v.isFinite else { return "null" }
            return String(format: "%.3f", v)
        case .string(let s): return JSON.quote(s)
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .object(let fields): return "{" + fields.map { JSON.quote($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        case .array(let items): return "[" + items.map(\.text).joined(separator: ",") + "]"
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 { out += String(format: "\\u%04x", scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }
}

/// Prints one JSON line on stdout (stdout carries only results; progress goes to stderr).
func emit(_ fields: [(String, JSON)]) {
    let line = JSON.object(fields).text + "\n"
    FileHandle.standardOutput.write(Data(line.utf8))
}

func progress(_ text: String) {
    FileHandle.standardError.write(Data("[PushLoad] \(text)\n".utf8))
}

/// CPU time of the whole process (all threads, user + system), in microseconds.
func processCPUMicros() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) * 1_000_000 + Double(ts.tv_nsec) / 1000
}

/// User and system CPU of this process from /proc/self/stat, in microseconds (10 ms ticks).
func processUserSysMicros() -> (user: Double, sys: Double) {
    guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return (0, 0) }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // After "pid (comm)": state is field 3, so utime (14) and stime (15) are at 11 and 12.
    guard fields.count > 12, let user = Double(fields[11]), let sys = Double(fields[12]) else { return (0, 0) }
    let hz = Double(sysconf(Int32(_SC_CLK_TCK)))
    return (user / hz * 1_000_000, sys / hz * 1_000_000)
}

/// VmRSS and VmHWM of this process, in bytes.
func residentBytes() -> (rss: Int, hwm: Int) {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0) }
    var rss = 0
    var hwm = 0
    for line in status.split(separator: "\n") {
        if line.hasPrefix("VmRSS:") || line.hasPrefix("VmHWM:") {
            let kb = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
            if line.hasPrefix("VmRSS:") { rss = kb * 1024 } else { hwm = kb * 1024 }
        }
    }
    return (rss, hwm)
}

/// CPUs this process may run on (what taskset set).
func allowedCPUs() -> String {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return "" }
    for line in status.split(separator: "\n") where line.hasPrefix("Cpus_allowed_list:") {
        return line.dropFirst("Cpus_allowed_list:".count).trimmingCharacters(in: .whitespaces)
    }
    return ""
}

/// Percentiles of microsecond samples, in milliseconds.
func latencySummary(_ samples: inout [UInt32], prefix: String = "latency_") -> [(String, JSON)] {
    samples.sort()
    func pick(_ p: Double) -> JSON {
        guard !samples.isEmpty else { return .null }
        let index = min(samples.count - 1, Int((p / 100 * Double(samples.count)).rounded(.up)) - 1)
        return .double(Double(samples[max(0, index)]) / 1000)
    }
    let mean = samples.isEmpty ? 0 : Double(samples.reduce(0) { $0 + UInt64($1) }) / Double(samples.count) / 1000
    return [
        ("\(prefix)p50_ms", pick(50)), ("\(prefix)p90_ms", pick(90)), ("\(prefix)p99_ms", pick(99)),
        ("\(prefix)p999_ms", pick(99.9)), ("\(prefix)max_ms", samples.last.map { .double(Double($0) / 1000) } ?? .null),
        ("\(prefix)mean_ms", .double(mean)),
    ]
}

/// A 64-hex-digit device token, distinct per index.
func deviceToken(_ index: Int) -> String {
    let seed = String(format: "%016llx", UInt64(index) &* 0x9E37_79B9_7F4A_7C15)
    return String(repeating: seed, count: 4)
}

/// Writes a fresh P-256 key as an APNs .p8 (PKCS#8 PEM) into a temporary file.
func writeAPNsKey(pem: String) throws -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("pushload-AuthKey-\(UUID().uuidString).p8").path
    try pem.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

/// RssAnon, RssFile and RssShmem of this process, in bytes (what VmRSS is made of).
func residentParts() -> (anon: Int, file: Int, shmem: Int) {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return (0, 0, 0) }
    var parts = (anon: 0, file: 0, shmem: 0)
    for line in status.split(separator: "\n") {
        let kb = (Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0) * 1024
        if line.hasPrefix("RssAnon:") {
            parts.anon = kb
        } else if line.hasPrefix("RssFile:") {
            parts.file = kb
        } else if line.hasPrefix("RssShmem:") {
            parts.shmem = kb
        }
    }
    return parts
}

/// glibc's view of the heap: bytes in live allocations, bytes free inside the heap, bytes in
/// mmapped blocks (mallinfo2, all arenas).
func heapUsage() -> (inUse: Int, free: Int, mmapped: Int) {
    var inUse = 0
    var free = 0
    var mmapped = 0
    pushload_heap_usage(&inUse, &free, &mmapped)
    return (inUse, free, mmapped)
}
