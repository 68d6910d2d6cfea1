import Foundation
import HeraldCore
import Yams

/// Turns a YAML config document into the JSON the config types decode, refusing what has no
/// JSON form with a named problem.
///
/// Why not `Yams.load`: its untyped constructor force-unwraps every mapping key as text, so a
/// config with a list or a mapping as a key (`? [a]: 1`, or a stray `-?` line) crashed the
/// server at start (found by `scripts/fuzz config`). This walks the composed node tree
/// itself: keys must be scalars, aliases are expanded at most `maxNodes` nodes in all (an
/// alias bomb is refused, not expanded), nesting is bounded.
enum YAMLConfigReader {
    static let maxNodes = 100_000
    static let maxDepth = 64

    struct Problem: Error {
        let message: String
    }

    /// The document as JSON data; nil for an empty document.
    static func json(from text: String) throws -> Data? {
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
        } catch {
            throw Problem(message: "is not valid YAML: \(error)")
        }
        guard let node else { return nil }
        var budget = maxNodes
        let object = try value(node, depth: 0, budget: &budget)
        if object is NSNull { return nil }
        guard object is [String: Any] else { throw Problem(message: "must be a mapping of sections") }
        guard JSONSerialization.isValidJSONObject(object) else { throw Problem(message: "holds a value with no JSON form (a number that is not finite)") }
        return try JSONSerialization.data(withJSONObject: object)
    }

    private static func value(_ node: Node, depth: Int, budget: inout Int) throws -> Any {
        budget -= 1
        guard budget >= 0 else { throw Problem(message: "is too large (more than \(maxNodes) values, aliases expanded)") }
        guard depth < maxDepth else { throw Problem(message: "is nested more than \(maxDepth) levels deep") }
        switch node {
        case .scalar(let scalar):
            return Self.scalar(node, text: scalar.string)
        case .mapping(let mapping):
            var object: [String: Any] = [:]
            for (key, item) in mapping {
                guard case .scalar(let name) = key else {
                    throw Problem(message: "has a key that is not text (line \((key.mark?.line).map(String.init) ?? "?"))")
                }
                object[name.string] = try value(item, depth: depth + 1, budget: &budget)
            }
            return object
        case .sequence(let sequence):
            var array: [Any] = []
            for item in sequence { array.append(try value(item, depth: depth + 1, budget: &budget)) }
            return array
        case .alias:
            throw Problem(message: "has an alias that does not resolve")
        }
    }

    /// A scalar as Yams's core schema resolves it (null, bool, int, float); anything else
    /// (a timestamp, binary) stays the text it was written as.
    private static func scalar(_ node: Node, text: String) -> Any {
        switch Constructor.default.any(from: node) {
        case let value as NSNull: value
        case let value as Bool: value
        case let value as Int: value
        case let value as Double: value
        default: text
        }
    }
}
