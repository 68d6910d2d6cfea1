import Foundation

/// One measurement as a JSON object on one line, keys in insertion order.
struct JSONLine: CustomStringConvertible {
    private var fields: [(String, String)] = []

    init(measure: String) {
        self["measure"] = measure
        self["time"] = ISO8601DateFormatter().string(from: Date())
    }

    subscript(key: String) -> String? {
        get { nil }
        set { set(key, newValue.map(Self.quote) ?? "null") }
    }

    subscript(key: String) -> Int? {
        get { nil }
        set { set(key, newValue.map { String($0) } ?? "null") }
    }

    subscript(key: String) -> Double? {
        get { nil }
        set { set(key, newValue.map { $0.isFinite ? String(format: "%.6g", $0) : "null" } ?? "null") }
    }

    subscript(key: String) -> Bool? {
        get { nil }
        set { set(key, newValue.map { $0 ? "true" : "false" } ?? "null") }
    }

    /// A raw JSON value (an array or object built by the caller).
    mutating func setRaw(_ key: String, _ json: String) { set(key, json) }

    private mutating func set(_ key: String, _ json: String) {
        if let index = fields.firstIndex(where: { $0.0 == key }) { fields[index].1 = json } else { fields.append((key, json)) }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }

    var description: String {
        "{" + fields.map { "\(Self.quote($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    func emit() {
        // One write per line, so lines from a pipe are never interleaved or held back by buffering.
        FileHandle.standardOutput.write(Data((description + "\n").utf8))
    }
}
