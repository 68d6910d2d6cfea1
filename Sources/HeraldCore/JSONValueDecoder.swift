import Foundation

/// Decodes `Decodable` types from an already-parsed `JSONValue`.
///
/// Why our own: Foundation's `JSONDecoder` reports a fraction where an integer is expected
/// (or an out-of-range number) as "not valid JSON" with no field, and clients must be told
/// which field is wrong. Decoding from the parsed tree gives exact paths for every error,
/// and realtime payloads, which arrive parsed, decode without being serialised again.
public struct JSONValueDecoder: Sendable {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        try T(from: ValueDecoder(value: value, codingPath: []))
    }
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
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw DecodingError.typeMismatch([String: JSONValue].self, .init(codingPath: codingPath, debugDescription: "expected an object, got \(value.typeName)"))
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = value else {
            throw DecodingError.typeMismatch([JSONValue].self, .init(codingPath: codingPath, debugDescription: "expected an array, got \(value.typeName)"))
        }
        return UnkeyedContainer(array: array, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleContainer(value: value, codingPath: codingPath)
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

    static func decode<T: Decodable>(_ type: T.Type, _ value: JSONValue, _ path: [any CodingKey]) throws -> T {
        if type == JSONValue.self, let same = value as? T { return same }
        return try T(from: ValueDecoder(value: value, codingPath: path))
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: [String: JSONValue]
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.keys.compactMap { Key(stringValue: $0) } }
    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func value(_ key: Key) throws -> JSONValue {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "missing"))
        }
        return value
    }

    private func path(_ key: Key) -> [any CodingKey] { codingPath + [key] }

    func decodeNil(forKey key: Key) throws -> Bool { (object[key.stringValue] ?? .null) == .null }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try Convert.bool(value(key), path(key)) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try Convert.string(value(key), path(key)) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try Convert.double(value(key), path(key)) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try Convert.double(value(key), path(key))) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try Convert.integer(type, value(key), path(key)) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try Convert.integer(type, value(key), path(key)) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try Convert.integer(type, value(key), path(key)) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try Convert.integer(type, value(key), path(key)) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try Convert.integer(type, value(key), path(key)) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try Convert.integer(type, value(key), path(key)) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try Convert.integer(type, value(key), path(key)) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try Convert.integer(type, value(key), path(key)) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try Convert.integer(type, value(key), path(key)) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try Convert.integer(type, value(key), path(key)) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try Convert.decode(type, value(key), path(key)) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: value(key), codingPath: path(key)).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: value(key), codingPath: path(key)).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder { ValueDecoder(value: .object(object), codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> any Decoder { ValueDecoder(value: object[key.stringValue] ?? .null, codingPath: path(key)) }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let array: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(array: [JSONValue], codingPath: [any CodingKey]) {
        self.array = array
        self.codingPath = codingPath
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    private mutating func next<T>(_ type: T.Type) throws -> (JSONValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(type, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "the array has no more elements"))
        }
        defer { currentIndex += 1 }
        return (array[currentIndex], codingPath + [IndexKey(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, array[currentIndex] == .null else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { let (v, p) = try next(type); return try Convert.bool(v, p) }
    mutating func decode(_ type: String.Type) throws -> String { let (v, p) = try next(type); return try Convert.string(v, p) }
    mutating func decode(_ type: Double.Type) throws -> Double { let (v, p) = try next(type); return try Convert.double(v, p) }
    mutating func decode(_ type: Float.Type) throws -> Float { let (v, p) = try next(type); return Float(try Convert.double(v, p)) }
    mutating func decode(_ type: Int.Type) throws -> Int { let (v, p) = try next(type); return try Convert.integer(type, v, p) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { let (v, p) = try next(type); return try Convert.integer(type, v, p) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { let (v, p) = try next(type); return try Convert.integer(type, v, p) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { let (v, p) = try next(type); return try Convert.integer(type, v, p) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { let (v, p) = try next(type); return try Convert.integer(type, v, p) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { let (v, p) = try next(type); return try Convert.integer(type, v, p) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { let (v, p) = try next(type); return try Convert.integer(type, v, p) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { let (v, p) = try next(type); return try Convert.integer(type, v, p) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { let (v, p) = try next(type); return try Convert.integer(type, v, p) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { let (v, p) = try next(type); return try Convert.integer(type, v, p) }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { let (v, p) = try next(type); return try Convert.decode(type, v, p) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (v, p) = try next([String: JSONValue].self)
        return try ValueDecoder(value: v, codingPath: p).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (v, p) = try next([JSONValue].self)
        return try ValueDecoder(value: v, codingPath: p).unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder {
        let (v, p) = try next(JSONValue.self)
        return ValueDecoder(value: v, codingPath: p)
    }
}

private struct SingleContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

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
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try Convert.decode(type, value, codingPath) }
}
