import HeraldCore

/// A Socket.IO argument: JSON plus binary blobs.
///
/// Why not `JSONValue`: Socket.IO events and acks may carry binary (sent as attachments with
/// placeholders); everything else in Herald is plain JSON, so binary lives only here.
public enum SocketValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case binary([UInt8])
    case array([SocketValue])
    case object([String: SocketValue])

    public init(_ json: JSONValue) {
        switch json {
        case .null: self = .null
        case .bool(let value): self = .bool(value)
        case .number(let value): self = .number(value)
        case .string(let value): self = .string(value)
        case .array(let values): self = .array(values.map(SocketValue.init))
        case .object(let object): self = .object(object.mapValues(SocketValue.init))
        }
    }

    /// The JSON form, or nil when the value contains binary.
    public var json: JSONValue? {
        switch self {
        case .null: return .null
        case .bool(let value): return .bool(value)
        case .number(let value): return .number(value)
        case .string(let value): return .string(value)
        case .binary: return nil
        case .array(let values):
            var result: [JSONValue] = []
            result.reserveCapacity(values.count)
            for value in values {
                guard let json = value.json else { return nil }
                result.append(json)
            }
            return .array(result)
        case .object(let object):
            var result: [String: JSONValue] = [:]
            for (key, value) in object {
                guard let json = value.json else { return nil }
                result[key] = json
            }
            return .object(result)
        }
    }

    public var containsBinary: Bool {
        switch self {
        case .binary: true
        case .array(let values): values.contains(where: \.containsBinary)
        case .object(let object): object.values.contains(where: \.containsBinary)
        default: false
        }
    }
}
