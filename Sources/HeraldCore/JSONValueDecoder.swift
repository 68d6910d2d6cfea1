import Foundation

/// Decodes `Decodable` types from an already-parsed `JSONValue`.
///
/// Why our own: Foundation's `JSONDecoder` reports a fraction where an integer is expected
/// (or an out-of-range number) as "not valid JSON" with no field, and clients must be told
/// which field is wrong. Decoding from the parsed tree gives exact paths for every error,
/// and realtime payloads, which arrive parsed, decode without being serialised again.
/// Configuration files decode through it too (`.configuration`), so that a section states
/// each key and each default once, as its property (see `ConfigSection`).
public struct JSONValueDecoder: Sendable {
    /// How keys are matched and what a missing key means.
    public enum Mode: Sendable {
        /// Request bodies and payloads: each key as the type names it; a missing key is an error.
        case exact
        /// Configuration files: a key may be spelled snake_case (`data_dir` for `dataDir`),
        /// and a key a `ConfigSection` leaves out, or sets to null, keeps its default.
        case configuration
    }

    private let mode: Mode

    public init(_ mode: Mode = .exact) {
        self.mode = mode
    }

    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try Convert.decode(type, value, [], mode)
    }
}

/// A key as the document spells it (error paths name what the user wrote).
private struct NameKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.init(stringValue) }
    init?(intValue: Int) { return nil }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    let stringValue: String
    init(_ index: Int) {
        intValue = index
        stringValue = "Index \(index)"
    }
    init?(intValue: Int) { self.init(intValue) }
    init?(stringValue: String) { return nil }
}

private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let mode: JSONValueDecoder.Mode
    /// The defaults of the `ConfigSection` being decoded (configuration mode only).
    var defaults: SectionDefaults? = nil
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw DecodingError.typeMismatch(
                [String: JSONValue].self, .init(codingPath: codingPath, debugDescription: "expected an object, got \(value.typeName)"))
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath, mode: mode, defaults: defaults))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = value else {
            throw DecodingError.typeMismatch([JSONValue].self, .init(codingPath: codingPath, debugDescription: "expected an array, got \(value.typeName)"))
        }
        return UnkeyedContainer(array: array, codingPath: codingPath, mode: mode)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleContainer(value: value, codingPath: codingPath, mode: mode)
    }
}

/// Conversions shared by all three container kinds, with exact-number checks.
private enum Convert {
    static func mismatch<T>(_ type: T.Type, _ value: JSONValue, _ path: [any CodingKey]) -> DecodingError {
        if value == .null {
            return DecodingError.valueNotFound(type, .init(codingPath: path, debugDescription: "expected \(type), got null"))
        }
        return DecodingError.typeMismatch(type, .init(codingPath: path, debugDescription: "expected \(type), got \(value.typeName)"))
    }

    static func string(_ value: JSONValue, _ path: [any CodingKey]) throws -> String {
        guard case .string(let string) = value else { throw mismatch(String.self, value, path) }
        return string
    }

    static func bool(_ value: JSONValue, _ path: [any CodingKey]) throws -> Bool {
        guard case .bool(let bool) = value else { throw mismatch(Bool.self, value, path) }
        return bool
    }

    static func double(_ value: JSONValue, _ path: [any CodingKey]) throws -> Double {
        guard case .number(let number) = value else { throw mismatch(Double.self, value, path) }
        return number
    }

    static func integer<T: FixedWidthInteger>(_ type: T.Type, _ value: JSONValue, _ path: [any CodingKey]) throws -> T {
        guard case .number(let number) = value else { throw mismatch(type, value, path) }
        guard number.rounded() == number, let exact = T(exactly: number) else {
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: "\(number) is not a whole number in range for \(type)"))
        }
        return exact
    }

    static func decode<T: Decodable>(_ type: T.Type, _ value: JSONValue, _ path: [any CodingKey], _ mode: JSONValueDecoder.Mode) throws -> T {
        if type == JSONValue.self, let same = value as? T { return same }
        let defaults = mode == .configuration ? SectionDefaults(type) : nil
        if let defaults, case .object(let object) = value {
            try refuseUnknownKeys(object, of: defaults, path)
        }
        return try T(from: ValueDecoder(value: value, codingPath: path, mode: mode, defaults: defaults))
    }

    /// A key that is not one of the section's settings is refused, not skipped: a misspelt
    /// setting (`otlp_endpont`) would otherwise leave its default in force without a word.
    static func refuseUnknownKeys(_ object: [String: JSONValue], of section: SectionDefaults, _ path: [any CodingKey]) throws {
        let known = section.keys
        guard let unknown = object.keys.sorted().first(where: { !known.contains($0) && !known.contains($0.snakeCased) }) else { return }
        let names = section.keys.filter { $0 == $0.snakeCased }.sorted()
        throw DecodingError.dataCorrupted(
            .init(codingPath: path + [NameKey(unknown)], debugDescription: "no such setting (those here are \(names.joined(separator: ", ")))"))
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: JSONValue]
    let codingPath: [any CodingKey]
    let mode: JSONValueDecoder.Mode
    let defaults: SectionDefaults?

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }

    /// The key as the document spells it and its value, if the document has it.
    private func find(_ key: Key) -> (name: String, value: JSONValue)? {
        if let value = object[key.stringValue] { return (key.stringValue, value) }
        guard mode == .configuration else { return nil }
        let snake = key.stringValue.snakeCased
        return object[snake].map { (snake, $0) }
    }

    /// What the document sets for `key`, or nil where a section default stands in for it.
    private func stated(_ key: Key) -> (name: String, value: JSONValue)? {
        let found = find(key)
        if let defaults, found?.value ?? .null == .null, defaults.value(key.stringValue) != nil { return nil }
        return found
    }

    func contains(_ key: Key) -> Bool {
        find(key) != nil || defaults?.value(key.stringValue) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let (_, value) = stated(key) else { return defaults?.isNil(key.stringValue) ?? true }
        return value == .null
    }

    /// Decodes the stated value with `convert`, or returns the section's default.
    private func decoded<T>(_ key: Key, _ convert: (JSONValue, [any CodingKey]) throws -> T) throws -> T {
        if let (name, value) = stated(key) { return try convert(value, codingPath + [NameKey(name)]) }
        if let fallback = defaults?.value(key.stringValue) as? T { return fallback }
        let name = mode == .configuration ? key.stringValue.snakeCased : key.stringValue
        throw DecodingError.keyNotFound(NameKey(name), .init(codingPath: codingPath, debugDescription: "missing"))
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoded(key, Convert.bool) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoded(key, Convert.string) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoded(key, Convert.double) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoded(key) { Float(try Convert.double($0, $1)) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoded(key) { try Convert.integer(type, $0, $1) } }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoded(key) { try Convert.integer(type, $0, $1) } }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoded(key) { try Convert.integer(type, $0, $1) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoded(key) { try Convert.integer(type, $0, $1) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoded(key) { try Convert.integer(type, $0, $1) } }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoded(key) { try Convert.integer(type, $0, $1) } }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoded(key) { try Convert.integer(type, $0, $1) } }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoded(key) { try Convert.integer(type, $0, $1) } }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoded(key) { try Convert.integer(type, $0, $1) } }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoded(key) { try Convert.integer(type, $0, $1) } }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoded(key) { try Convert.decode(type, $0, $1, mode) } }

    /// The document's value for `key` and its path, for a nested container.
    private func present(_ key: Key) throws -> (JSONValue, [any CodingKey]) {
        guard let (name, value) = find(key) else {
            throw DecodingError.keyNotFound(NameKey(key.stringValue), .init(codingPath: codingPath, debugDescription: "missing"))
        }
        return (value, codingPath + [NameKey(name)])
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, path) = try present(key)
        return try ValueDecoder(value: value, codingPath: path, mode: mode).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        let (value, path) = try present(key)
        return try ValueDecoder(value: value, codingPath: path, mode: mode).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { ValueDecoder(value: .object(object), codingPath: codingPath, mode: mode) }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        let found = find(key)
        return ValueDecoder(value: found?.value ?? .null, codingPath: codingPath + [NameKey(found?.name ?? key.stringValue)], mode: mode)
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let array: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    let mode: JSONValueDecoder.Mode

    init(array: [JSONValue], codingPath: [any CodingKey], mode: JSONValueDecoder.Mode) {
        self.array = array
        self.codingPath = codingPath
        self.mode = mode
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    private mutating func next<T>(_ type: T.Type) throws -> (JSONValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "the array has no more elements"))
        }
        defer { currentIndex += 1 }
        return (array[currentIndex], codingPath + [IndexKey(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, array[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        let (v, p) = try next(type)
        return try Convert.bool(v, p)
    }
    mutating func decode(_ type: String.Type) throws -> String {
        let (v, p) = try next(type)
        return try Convert.string(v, p)
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        let (v, p) = try next(type)
        return try Convert.double(v, p)
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        let (v, p) = try next(type)
        return Float(try Convert.double(v, p))
    }
    mutating func decode(_ type: Int.Type) throws -> Int {
        let (v, p) = try next(type)
        return try Convert.integer(type, v, p)
    }
    mutating func decode(_ type: Int8.Type) throws -> Int8 {
        let (v, p) = try next(type)
        return try Convert.integer(type, v, p)
    }
    mutating func decode(_ type: Int16.Type) throws -> Int16 {
        let (v, p) = try next(type)
        return try Convert.integer(type, v, p)
    }
    mutating func decode(_ type: Int32.Type) throws -> Int32 {
        let (v, p) = try next(type)
        return try Convert.integer(type, v, p)
    }
    mutating func decode(_ type: Int64.Type) throws -> Int64 {
        let (v, p) = try next(type)
        return try Convert.integer(type, v, p)
    }
    mutating func decode(_ type: UInt.Type) throws -> UInt {
        let (v, p) = try next(type)
        return try Convert.integer(type, v, p)
    }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
        let (v, p) = try next(type)
        return try Convert.integer(type, v, p)
    }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
        let (v, p) = try next(type)
        return try Convert.integer(type, v, p)
    }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
        let (v, p) = try next(type)
        return try Convert.integer(type, v, p)
    }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
        let (v, p) = try next(type)
        return try Convert.integer(type, v, p)
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (v, p) = try next(type)
        return try Convert.decode(type, v, p, mode)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (v, p) = try next([String: JSONValue].self)
        return try ValueDecoder(value: v, codingPath: p, mode: mode).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (v, p) = try next([JSONValue].self)
        return try ValueDecoder(value: v, codingPath: p, mode: mode).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (v, p) = try next(JSONValue.self)
        return ValueDecoder(value: v, codingPath: p, mode: mode)
    }
}

private struct SingleContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]
    let mode: JSONValueDecoder.Mode

    func decodeNil() -> Bool { value == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try Convert.bool(value, codingPath) }
    func decode(_ type: String.Type) throws -> String { try Convert.string(value, codingPath) }
    func decode(_ type: Double.Type) throws -> Double { try Convert.double(value, codingPath) }
    func decode(_ type: Float.Type) throws -> Float { Float(try Convert.double(value, codingPath)) }
    func decode(_ type: Int.Type) throws -> Int { try Convert.integer(type, value, codingPath) }
    func decode(_ type: Int8.Type) throws -> Int8 { try Convert.integer(type, value, codingPath) }
    func decode(_ type: Int16.Type) throws -> Int16 { try Convert.integer(type, value, codingPath) }
    func decode(_ type: Int32.Type) throws -> Int32 { try Convert.integer(type, value, codingPath) }
    func decode(_ type: Int64.Type) throws -> Int64 { try Convert.integer(type, value, codingPath) }
    func decode(_ type: UInt.Type) throws -> UInt { try Convert.integer(type, value, codingPath) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try Convert.integer(type, value, codingPath) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try Convert.integer(type, value, codingPath) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try Convert.integer(type, value, codingPath) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try Convert.integer(type, value, codingPath) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try Convert.decode(type, value, codingPath, mode) }
}
