import Foundation
import NIOCore
import Synchronization

/// An integer shared between the publisher's loop and the clients' loops.
final class SharedCounter: Sendable {
    private let atomic = Atomic<Int>(0)
    var value: Int { atomic.load(ordering: .acquiring) }
    func store(_ v: Int) { atomic.store(v, ordering: .releasing) }
}

/// CLOCK_MONOTONIC in nanoseconds: the same clock in every process on the host, so a
/// timestamp written by the publisher can be compared with a receive time anywhere here.
@inline(__always)
func monotonicNanos() -> UInt64 {
    NIODeadline.now().uptimeNanoseconds
}

/// A JSON value for the one-line summaries (keys keep their order).
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
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

extension Histogram {
    /// Percentiles in milliseconds (the histogram holds microseconds).
    func summaryMs(prefix: String) -> [(String, JSON)] {
        func ms(_ us: UInt64) -> JSON { .double(Double(us) / 1000) }
        return [
            ("\(prefix)samples", .int(Int(count))),
            ("\(prefix)p50_ms", ms(percentile(50))),
            ("\(prefix)p90_ms", ms(percentile(90))),
            ("\(prefix)p99_ms", ms(percentile(99))),
            ("\(prefix)p999_ms", ms(percentile(99.9))),
            ("\(prefix)max_ms", ms(count == 0 ? 0 : max)),
            ("\(prefix)mean_ms", .double(mean / 1000)),
        ]
    }
}

/// Writes a progress line to stderr (stdout carries only the JSON summary).
func log(_ message: String) {
    FileHandle.standardError.write(Data("[socketio-load] \(message)\n".utf8))
}

/// VmRSS of a process in bytes, from /proc/PID/status; nil when it cannot be read.
func readRSS(pid: Int32) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let digits = line.split(separator: " ").compactMap { Int($0) }
        if let kb = digits.first { return kb * 1024 }
    }
    return nil
}

/// Number of open file descriptors of a process (for the server's view of connections).
func countFDs(pid: Int32) -> Int? {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd"))?.count
}

/// Runs a shell command and returns its trimmed stdout (used for `--token-cmd`).
func runShell(_ command: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw LoadError("command failed (\(process.terminationStatus)): \(command)")
    }
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
}

struct LoadError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A `http://host:port[/path]` URL split into its parts (only plain http on loopback).
struct HTTPURL: Sendable {
    var host: String
    var port: Int
    var path: String

    init(_ text: String) throws {
        guard text.hasPrefix("http://") || text.hasPrefix("ws://") else { throw LoadError("only http:// or ws:// URLs: \(text)") }
        let rest = text.drop(while: { $0 != "/" }).dropFirst(2)
        let authority = rest.prefix(while: { $0 != "/" })
        path = String(rest.dropFirst(authority.count))
        if path.isEmpty { path = "/" }
        if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            guard let p = Int(authority[authority.index(after: colon)...]) else { throw LoadError("bad port in \(text)") }
            port = p
        } else {
            host = String(authority)
            port = 80
        }
    }
}

/// A per-client set of received sequence numbers (1-based), with duplicate detection and
/// the length of the gap-free prefix.
struct SeqSet {
    private var words: [UInt64] = []
    private(set) var distinct = 0
    private(set) var duplicates = 0
    /// Every seq in 1...prefix has been received.
    private(set) var prefix = 0

    /// Adds `seq`; returns false for a duplicate or an out-of-range value.
    @discardableResult
    mutating func insert(_ seq: Int) -> Bool {
        guard seq >= 1, seq <= 1 << 24 else { return false }
        let bit = seq - 1
        let w = bit >> 6
        if w >= words.count { words.append(contentsOf: repeatElement(0, count: w - words.count + 1 + words.count / 2)) }
        let mask: UInt64 = 1 << UInt64(bit & 63)
        if words[w] & mask != 0 {
            duplicates += 1
            return false
        }
        words[w] |= mask
        distinct += 1
        if seq == prefix + 1 {
            var next = prefix + 1
            while contains(next + 1) { next += 1 }
            prefix = next
        }
        return true
    }

    func contains(_ seq: Int) -> Bool {
        guard seq >= 1 else { return false }
        let bit = seq - 1
        let w = bit >> 6
        guard w < words.count else { return false }
        return words[w] & (1 << UInt64(bit & 63)) != 0
    }

    /// The members of `seqs` this set lacks.
    func missingList(of seqs: SeqSet) -> [Int] {
        var out: [Int] = []
        for (i, word) in seqs.words.enumerated() {
            var lack = word & ~(i < words.count ? words[i] : 0)
            while lack != 0 {
                let bit = lack.trailingZeroBitCount
                out.append(i * 64 + bit + 1)
                lack &= lack - 1
            }
        }
        return out
    }

    /// Calls `body` with every seq in the set, in increasing order. (Not `forEach`: the
    /// formatter turns `forEach` calls into for-in loops, and the set is not a `Sequence`.)
    func forEachMember(_ body: (Int) -> Void) {
        for (i, word) in words.enumerated() {
            var bits = word
            while bits != 0 {
                body(i * 64 + bits.trailingZeroBitCount + 1)
                bits &= bits - 1
            }
        }
    }

    /// How many of `seqs` this set lacks.
    func missing(of seqs: SeqSet) -> Int {
        var n = 0
        for (i, word) in seqs.words.enumerated() {
            let mine = i < words.count ? words[i] : 0
            n += (word & ~mine).nonzeroBitCount
        }
        return n
    }
}
