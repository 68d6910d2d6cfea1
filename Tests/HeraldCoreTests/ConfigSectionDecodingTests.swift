import HeraldCore
import Testing

private struct Limits: ConfigSection, Equatable {
    var maxBodyBytes = 1_024
    var burst = 5
    init() {}
}

private struct Endpoint: Codable, Equatable {
    var baseURL: String
    var timeoutMs: Int?
}

private struct Section: ConfigSection, Equatable {
    var dataDir = "./data"
    var baseURL = "https://default.example"
    var teamID = ""
    var threads: Int?
    var retries: Int? = 3
    var ratio = 1.5
    var enabled = true
    var radii: [Double] = [1, 2]
    var limits = Limits()
    var tuned: Limits = {
        var limits = Limits()
        limits.burst = 9
        return limits
    }()
    var types: [String: Limits] = ["STANDARD": Limits()]
    var endpoint: Endpoint?
    init() {}
}

@Suite struct ConfigSectionDecodingTests {
    let decoder = JSONValueDecoder(.configuration)

    @Test func keysAreSnakeCaseAndLeftOutKeysKeepTheirDefaults() throws {
        let section = try decoder.decode(
            Section.self,
            from: [
                "data_dir": "/var/lib/x", "base_url": "https://h", "team_id": "ABCDE12345", "threads": 4,
                "limits": ["max_body_bytes": 10], "types": ["job_offer": ["burst": 2], "XL": [:]],
            ])
        var expected = Section()
        expected.dataDir = "/var/lib/x"
        expected.baseURL = "https://h"
        expected.teamID = "ABCDE12345"
        expected.threads = 4
        expected.limits.maxBodyBytes = 10
        var offer = Limits()
        offer.burst = 2
        // A dictionary's keys stay as written; it replaces the default dictionary, and each
        // entry that is a section starts from that section's defaults.
        expected.types = ["job_offer": offer, "XL": Limits()]
        #expect(section == expected)
    }

    @Test func nullAndAnEmptyDocumentMeanTheDefaults() throws {
        #expect(try decoder.decode(Section.self, from: [:]) == Section())
        #expect(try decoder.decode(Section.self, from: ["retries": .null, "data_dir": .null, "limits": .null]) == Section())
        // A nested section left out keeps the enclosing default (burst 9), one that is given
        // starts from its own type's defaults (burst 5) and takes what it states.
        #expect(try decoder.decode(Section.self, from: [:]).tuned.burst == 9)
        #expect(
            try decoder.decode(Section.self, from: ["tuned": ["max_body_bytes": 1]]).tuned
                == {
                    var l = Limits()
                    l.maxBodyBytes = 1
                    return l
                }())
        #expect(try decoder.decode(Section.self, from: ["retries": 0]).retries == 0)
    }

    @Test func aTypeThatIsNotASectionStillRequiresItsKeys() throws {
        let section = try decoder.decode(Section.self, from: ["endpoint": ["base_url": "https://e"]])
        #expect(section.endpoint == Endpoint(baseURL: "https://e", timeoutMs: nil))
        #expect(path(of: ["endpoint": ["timeout_ms": 5]]) == ["endpoint", "base_url"])
    }

    @Test func errorsNameTheKeyAsTheFileSpellsIt() {
        #expect(path(of: ["limits": ["max_body_bytes": "ten"]]) == ["limits", "max_body_bytes"])
        #expect(path(of: ["radii": [1, "x"]]) == ["radii", "Index 1"])
        #expect(path(of: ["ratio": true]) == ["ratio"])
        #expect(path(of: ["threads": 1, "limits": ["burst": 1.5]]) == ["limits", "burst"])
        #expect(path(of: ["data_dir": 3]) == ["data_dir"])
    }

    /// A key no section has is an error at its path, not a setting silently left at its
    /// default (a misspelt `otlp_endpont` would leave tracing off without a word).
    @Test func aKeyThatIsNoSettingIsRefusedWhereItIs() throws {
        #expect(path(of: ["data_dri": "/x"]) == ["data_dri"])
        #expect(path(of: ["limits": ["max_body_byte": 1]]) == ["limits", "max_body_byte"])
        #expect(path(of: ["types": ["XL": ["bust": 2]]]) == ["types", "XL", "bust"])
        do {
            _ = try decoder.decode(Section.self, from: ["limits": ["max_body_byte": 1]])
            Issue.record("an unknown key was accepted")
        } catch DecodingError.dataCorrupted(let context) {
            #expect(context.debugDescription == "no such setting (those here are burst, max_body_bytes)")
        }
        // Both spellings of a real setting stay accepted, and a map's own keys are free.
        #expect(try decoder.decode(Section.self, from: ["dataDir": "/y", "types": ["anything": [:]]]).dataDir == "/y")
    }

    @Test func exactModeKeepsNamesAsTheTypeSpellsThem() {
        #expect(throws: DecodingError.self) { try JSONValueDecoder().decode(Section.self, from: ["data_dir": "/x"]) }
    }

    @Test func snakeCaseSpellsAcronymsAsOneWord() {
        #expect("dataDir".snakeCased == "data_dir")
        #expect("baseURL".snakeCased == "base_url")
        #expect("tokenURL".snakeCased == "token_url")
        #expect("teamID".snakeCased == "team_id")
        #expect("vapidPrivateKeyFile".snakeCased == "vapid_private_key_file")
        #expect("maxBodyBytes".snakeCased == "max_body_bytes")
        #expect("webpush".snakeCased == "webpush")
        #expect("URLPath".snakeCased == "url_path")
    }

    private func path(of value: JSONValue) -> [String] {
        do {
            _ = try decoder.decode(Section.self, from: value)
            return ["decoded"]
        } catch let error as DecodingError {
            switch error {
            case .typeMismatch(_, let c), .valueNotFound(_, let c), .dataCorrupted(let c): return c.codingPath.map(\.stringValue)
            case .keyNotFound(let key, let c): return c.codingPath.map(\.stringValue) + [key.stringValue]
            @unknown default: return ["unknown"]
            }
        } catch {
            return ["\(error)"]
        }
    }
}
