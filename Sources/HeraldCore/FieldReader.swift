/// Reads typed fields from a JSON object body, collecting every problem by field name, so
/// hand-validated bodies (partial updates, aliases) answer like decoded ones.
public struct FieldReader {
    public let object: [String: JSONValue]
    public var validator = FieldValidator()

    public init(_ object: [String: JSONValue]) {
        self.object = object
    }

    /// Refuses fields outside `allowed` (a typo must not be silently ignored).
    public mutating func refuseUnknown(_ allowed: Set<String>, prefix: String = "") {
        for key in object.keys.sorted() where !allowed.contains(key) {
            validator.fail(prefix + key, "is not a known field")
        }
    }

    public mutating func string(_ key: String, maxLength: Int, required: Bool = false, prefix: String = "") -> String? {
        switch object[key] {
        case nil, .null?:
            if required { validator.fail(prefix + key, "is required") }
            return nil
        case .string(let value)?:
            if value.isEmpty || value.count > maxLength {
                validator.fail(prefix + key, "must be 1 to \(maxLength) characters")
                return nil
            }
            if value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                validator.fail(prefix + key, "must not contain control characters")
                return nil
            }
            return value
        case let other?:
            validator.fail(prefix + key, "must be a string, got \(other.typeName)")
            return nil
        }
    }

    public mutating func bool(_ key: String, prefix: String = "") -> Bool? {
        switch object[key] {
        case nil: return nil
        case .bool(let value)?: return value
        case let other?:
            validator.fail(prefix + key, "must be true or false, got \(other.typeName)")
            return nil
        }
    }

    /// A whole number in `range` (JSON numbers without a fraction).
    public mutating func integer(_ key: String, range: ClosedRange<Int>, prefix: String = "") -> Int? {
        switch object[key] {
        case nil: return nil
        case .number(let value)? where value.rounded() == value && value >= Double(range.lowerBound) && value <= Double(range.upperBound):
            return Int(value)
        case let other?:
            validator.fail(prefix + key, "must be a whole number from \(range.lowerBound) to \(range.upperBound), got \(other.typeName)")
            return nil
        }
    }

    public mutating func object(_ key: String, prefix: String = "") -> [String: JSONValue]? {
        switch object[key] {
        case nil, .null?: return nil
        case .object(let value)?: return value
        case let other?:
            validator.fail(prefix + key, "must be an object, got \(other.typeName)")
            return nil
        }
    }

    public mutating func fail(_ field: String, _ message: String) {
        validator.fail(field, message)
    }

    public mutating func merge(_ other: FieldReader) {
        for error in other.validator.errors { validator.fail(error.field, error.message) }
    }

    public func validate() throws {
        try validator.validate()
    }
}
