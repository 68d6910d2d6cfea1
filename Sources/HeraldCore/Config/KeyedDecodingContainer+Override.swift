extension KeyedDecodingContainer {
    /// Replaces `value` — the section's default, set by its initialiser — with the configured
    /// one when `key` is present and not null. Why: each default is written once, where the
    /// property is declared, and a config file names only what it changes.
    public func override<T: Decodable>(_ value: inout T, _ key: Key) throws {
        if let configured = try decodeIfPresent(T.self, forKey: key) { value = configured }
    }

    /// The same for an optional setting whose default is nil or a value.
    public func override<T: Decodable>(_ value: inout T?, _ key: Key) throws {
        if let configured = try decodeIfPresent(T.self, forKey: key) { value = configured }
    }
}
