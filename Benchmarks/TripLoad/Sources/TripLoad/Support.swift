import Foundation
import NIOCore

#if canImport(Glibc)
    import Glibc
#endif

/// CLOCK_MONOTONIC in nanoseconds (send and receive times are taken in this one process).
@inline(__always)
func nowNanos() -> UInt64 {
    NIODeadline.now().uptimeNanoseconds
}

/// Progress on stderr; stdout carries only the JSON lines.
func note(_ message: String) {
    FileHandle.standardError.write(Data("[trip-load] \(message)\n".utf8))
}

/// One line on stdout, written at once (the run script tees it into results.jsonl).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// One JSON line with keys in the order given.
enum Out: Sendable {
    case int(Int)
    case num(Double)
    case str(String)
    case bool(Bool)
    case null
    case obj([(String, Out)])

    var text: String {
        switch self {
        case .int(let v): return String(v)
        case .num(let v): return v.isFinite ? String(format: "%.3f", v) : "null"
        case .str(let s): return Out.quote(s)
        case .bool(let b): return b ? "true" : "false"
        case .null: return "null"
        case .obj(let fields): return "{" + fields.map { Out.quote($0.0) + ":" + $0.1.text }.joined(separator: ",") + "}"
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            default:
                if scalar.value < 0x20 { out += String(format: "\\u%04x", scalar.value) } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out + "\""
    }
}

/// user + system CPU seconds of a process (or thread group), from /proc/PID/stat.
func cpuSeconds(pid: Int32) -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = text.lastIndex(of: ")")
    else { return nil }
    let fields = text[text.index(after: close)...].split(separator: " ")
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
}

/// CPU seconds of a process and all its descendants (PostgreSQL's backends under the postmaster).
func treeCPUSeconds(root: Int32) -> Double? {
    guard var total = cpuSeconds(pid: root) else { return nil }
    var parent: [Int32: Int32] = [:]
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
        guard let pid = Int32(entry), let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { continue }
        let fields = text[text.index(after: close)...].split(separator: " ")
        if fields.count > 1, let ppid = Int32(fields[1]) { parent[pid] = ppid }
    }
    for pid in parent.keys where pid != root {
        var p = parent[pid]
        var depth = 0
        while let q = p, q > 1, depth < 16 {
            if q == root {
                total += cpuSeconds(pid: pid) ?? 0
                break
            }
            p = parent[q]
            depth += 1
        }
    }
    return total
}

/// The 1-minute load average (other work on the machine shows here).
func loadAverage() -> Double? {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
    return text.split(separator: " ").first.flatMap { Double($0) }
}

/// A first-in first-out queue on a ring buffer (no shifting on pop).
struct Fifo<Element> {
    private var storage: [Element?] = []
    private var head = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func push(_ element: Element) {
        if count == storage.count {
            // Grow: unroll into a bigger array, oldest first.
            var grown = [Element?](repeating: nil, count: Swift.max(16, storage.count * 2))
            for i in 0..<count { grown[i] = storage[(head + i) % storage.count] }
            storage = grown
            head = 0
        }
        storage[(head + count) % storage.count] = element
        count += 1
    }

    @discardableResult
    mutating func pop() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        return element
    }

    /// The `i`-th oldest element (0 = the head).
    func peek(_ i: Int) -> Element? {
        guard i < count else { return nil }
        return storage[(head + i) % storage.count]
    }

    mutating func removeAll() {
        while pop() != nil {}
    }
}

/// Reading the few fields the generator needs straight from a frame's bytes.
enum Scan {
    /// Whether `needle` occurs in `bytes`.
    static func contains(_ bytes: UnsafeRawBufferPointer, _ needle: StaticString) -> Bool {
        find(bytes, needle) != nil
    }

    /// The offset just past the first occurrence of `needle`.
    static func find(_ bytes: UnsafeRawBufferPointer, _ needle: StaticString) -> Int? {
        let n = needle.utf8CodeUnitCount
        guard bytes.count >= n else { return nil }
        let k = UnsafeBufferPointer(start: needle.utf8Start, count: n)
        var i = 0
        let last = bytes.count - n
        outer: while i <= last {
            for j in 0..<n where bytes[i + j] != k[j] {
                i += 1
                continue outer
            }
            return i + n
        }
        return nil
    }

    static func hasPrefix(_ bytes: UnsafeRawBufferPointer, _ prefix: StaticString) -> Bool {
        let n = prefix.utf8CodeUnitCount
        guard bytes.count >= n else { return false }
        let k = UnsafeBufferPointer(start: prefix.utf8Start, count: n)
        for j in 0..<n where bytes[j] != k[j] { return false }
        return true
    }

    /// The JSON number right after `key` (e.g. `"latitude":`).
    static func number(after key: StaticString, in bytes: UnsafeRawBufferPointer) -> Double? {
        guard var p = find(bytes, key) else { return nil }
        while p < bytes.count && bytes[p] == UInt8(ascii: " ") { p += 1 }
        let start = p
        while p < bytes.count {
            let c = bytes[p]
            let numeric =
                (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-") || c == UInt8(ascii: "+")
                || c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
            if !numeric { break }
            p += 1
        }
        guard p > start else { return nil }
        return Double(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<p]), as: UTF8.self))
    }

    static func text(_ bytes: UnsafeRawBufferPointer, limit: Int = 200) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<Swift.min(limit, bytes.count)]), as: UTF8.self)
    }
}
