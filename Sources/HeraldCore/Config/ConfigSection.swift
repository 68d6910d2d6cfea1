/// A configuration section: decodable from the config file, where every setting it leaves
/// out keeps the value `init()` gives it.
///
/// Why: each default is stated once, where the property is declared, and each key once, as
/// the property's name (the file spells it snake_case: `data_dir` for `dataDir`). Decode
/// sections with `JSONValueDecoder(.configuration)`. A setting no default fits (a
/// credential, a feed's name) defaults to empty, and the section's validation names it
/// missing. Sections are `Codable` so that a loaded configuration can be written back
/// (JSON with snake_case keys) and loads to the same values.
public protocol ConfigSection: Codable {
    init()
}

/// The settings of one section's `init()`, by property name: what a key that the file
/// leaves out (or sets to null) decodes to.
struct SectionDefaults {
    private let values: [String: Any]
    /// Every setting's name as a file may spell it: the property's and its snake_case form.
    let keys: Set<String>

    init?(_ type: Any.Type) {
        guard let section = type as? any ConfigSection.Type else { return nil }
        var values: [String: Any] = [:]
        for child in Mirror(reflecting: section.init()).children {
            if let label = child.label { values[label] = child.value }
        }
        self.values = values
        keys = Set(values.keys.flatMap { [$0, $0.snakeCased] })
    }

    /// The default of `property`; nil when the section has no such property (an optional
    /// property whose default is nil is reported by `isNil`).
    func value(_ property: String) -> Any? { values[property] }

    /// Whether the default of `property` is an optional holding nothing.
    func isNil(_ property: String) -> Bool {
        guard let value = values[property] else { return false }
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .optional && mirror.children.isEmpty
    }
}

extension String {
    /// `dataDir` → `data_dir`, `baseURL` → `base_url`, `teamID` → `team_id`: how a config
    /// file spells a property's name.
    public var snakeCased: String {
        let characters = Array(self)
        var result = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true) { result += "_" }
            }
            result += character.lowercased()
        }
        return result
    }
}
