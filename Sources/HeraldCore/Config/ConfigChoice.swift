/// A setting that is one of a few words (`provider: stripe`, `format: json`): an enum whose
/// raw values are what the file says, so code switches over cases instead of comparing text.
///
/// Why not only `String` raw values: a word the enum does not know is refused while the file
/// is read, naming the key and the words it takes (`payments.provider is not valid: must be
/// ledger or stripe`), as the sections' own checks name theirs.
public protocol ConfigChoice: RawRepresentable<String>, CaseIterable, Codable, Sendable {}

extension ConfigChoice {
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(rawValue: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "must be \(Self.choices)"))
        }
        self = value
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// "ledger or stripe", "trace, debug or info": the words a file may use.
    public static var choices: String {
        let words = allCases.map(\.rawValue)
        guard words.count > 1 else { return words.first ?? "" }
        return words.dropLast().joined(separator: ", ") + " or " + words.last!
    }
}
