import Foundation
import HeraldCore
import Testing

@testable import HeraldServer

/// `docs/configuration.md` against the configuration types: every key the code reads is
/// documented, nothing documented is not read, and every documented default is the code's.
///
/// The reference is the YAML blocks of the page that follow a `<!-- config-reference -->`
/// line, merged. Keys come from the types by reflection (a property `baseURL` is the key
/// `base_url`, as the loader spells it), so a new setting without a line in the page, or a
/// line left behind by a removed one, fails here; values are checked by loading the
/// documented tree with the server's own loader and comparing it with `HeraldConfig()`.
@Suite struct ConfigurationReferenceTests {
    static let marker = "<!-- config-reference -->"

    static var pagePath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/configuration.md").path
    }

    /// The documented tree: every marked YAML block, deep-merged.
    static func documented() throws -> JSONValue {
        let text = try String(contentsOfFile: pagePath, encoding: .utf8)
        var merged: [String: JSONValue] = [:]
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)[...]
        var blocks = 0
        while let line = lines.popFirst() {
            guard line.trimmingCharacters(in: .whitespaces) == marker else { continue }
            guard let fence = lines.popFirst(), fence.hasPrefix("```yaml") else {
                Issue.record("\(marker) must be followed by a ```yaml block")
                continue
            }
            var body: [String] = []
            while let next = lines.popFirst(), !next.hasPrefix("```") { body.append(next) }
            blocks += 1
            guard let data = try YAMLConfigReader.json(from: body.joined(separator: "\n")) else { continue }
            guard case .object(let object) = try JSONDecoder().decode(JSONValue.self, from: data) else { continue }
            merged = merge(merged, object)
        }
        #expect(blocks > 0, "no \(marker) blocks in docs/configuration.md")
        return .object(merged)
    }

    static func merge(_ a: [String: JSONValue], _ b: [String: JSONValue]) -> [String: JSONValue] {
        var result = a
        for (key, value) in b {
            if case .object(let left)? = result[key], case .object(let right) = value {
                result[key] = .object(merge(left, right))
            } else {
                result[key] = value
            }
        }
        return result
    }

    /// Key paths of a JSON tree (an empty object or list is a leaf).
    static func paths(_ value: JSONValue, _ prefix: String = "") -> Set<String> {
        switch value {
        case .object(let object) where !object.isEmpty:
            return object.reduce(into: Set<String>()) { $0.formUnion(paths($1.value, prefix.isEmpty ? $1.key : prefix + "." + $1.key)) }
        case .array(let items) where !items.isEmpty:
            return items.enumerated().reduce(into: Set<String>()) { $0.formUnion(paths($1.element, "\(prefix)[\($1.offset)]")) }
        default:
            return [prefix]
        }
    }

    /// Key paths of a configuration value, by reflection: sections and nested structs are
    /// walked, an optional without a value, an empty list or map is a leaf.
    static func paths(of value: Any, _ prefix: String = "") -> Set<String> {
        let mirror = Mirror(reflecting: value)
        switch mirror.displayStyle {
        case .optional:
            guard let wrapped = mirror.children.first?.value else { return [prefix] }
            return paths(of: wrapped, prefix)
        case .struct where !mirror.children.isEmpty && !(value is any RawRepresentable) && encodesAsObject(value):
            var result: Set<String> = []
            for child in mirror.children {
                guard let label = child.label else { continue }
                result.formUnion(paths(of: child.value, prefix.isEmpty ? label.snakeCased : prefix + "." + label.snakeCased))
            }
            return result
        case .dictionary where !mirror.children.isEmpty:
            var result: Set<String> = []
            for child in mirror.children {
                let pair = Mirror(reflecting: child.value).children.map(\.value)
                guard pair.count == 2, let key = pair[0] as? String else { continue }
                result.formUnion(paths(of: pair[1], prefix + "." + key))
            }
            return result
        case .collection where !mirror.children.isEmpty:
            return mirror.children.enumerated().reduce(into: Set<String>()) { $0.formUnion(paths(of: $1.element.value, "\(prefix)[\($1.offset)]")) }
        default:
            return [prefix]
        }
    }

    /// A struct the file spells as a mapping (a section, a rate-limit rule), not one it spells
    /// as a scalar or a list (`auth.role_claim`, a name or a list of names).
    static func encodesAsObject(_ value: Any) -> Bool {
        guard let encodable = value as? any Encodable, let data = try? JSONEncoder().encode(encodable) else { return true }
        return data.first == UInt8(ascii: "{")
    }

    /// A value as sorted JSON, to compare sections whatever order their maps iterate in.
    static func canonical(_ value: Any) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let encodable = value as? any Encodable, let data = try? encoder.encode(encodable) else { return String(reflecting: value) }
        return String(decoding: data, as: UTF8.self)
    }

    @Test func everyKeyIsDocumentedAndNothingElse() throws {
        let documented = Self.paths(try Self.documented())
        let code = Self.paths(of: HeraldConfig())
        let missing = code.subtracting(documented).sorted()
        let unknown = documented.subtracting(code).sorted()
        #expect(missing.isEmpty, "keys the code reads that docs/configuration.md does not list: \(missing)")
        #expect(unknown.isEmpty, "keys docs/configuration.md lists that the code does not read: \(unknown)")
    }

    @Test func everyDocumentedDefaultIsTheCodes() throws {
        let loaded = try JSONValueDecoder(.configuration).decode(HeraldConfig.self, from: try Self.documented())
        let defaults = HeraldConfig()
        // Section by section, so a failure names where the page and the code disagree.
        let left = Mirror(reflecting: loaded).children
        let right = Mirror(reflecting: defaults).children
        for (documented, code) in zip(left, right) {
            #expect(Self.canonical(documented.value) == Self.canonical(code.value), "\(code.label?.snakeCased ?? "?") differs from its default")
        }
        #expect(loaded == defaults)
    }
}
