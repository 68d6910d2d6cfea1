import Foundation
import HeraldCore

/// Reads the configuration: defaults, then the JSON or YAML file, then `HERALD_*`
/// environment variables. Command-line flags are applied by the caller last.
public enum ConfigLoader {
    /// Environment variables and the config path each overrides.
    public static let environmentKeys: [(variable: String, path: String)] = [
        ("HERALD_HOST", "server.host"),
        ("HERALD_PORT", "server.port"),
        ("HERALD_DATABASE_URL", "database.url"),
        ("HERALD_DATA_DIR", "data_dir"),
        ("HERALD_JWT_SECRET", "auth.jwt_secret"),
        ("HERALD_JWKS_FILE", "auth.jwks_file"),
        ("HERALD_JWKS_URL", "auth.jwks_url"),
        ("HERALD_JWT_ISSUER", "auth.issuer"),
        ("HERALD_JWT_AUDIENCE", "auth.audience"),
        ("HERALD_LOG_LEVEL", "logging.level"),
        ("HERALD_LOG_FORMAT", "logging.format"),
        ("HERALD_OTLP_ENDPOINT", "tracing.otlp_endpoint"),
        ("HERALD_STRIPE_SECRET_KEY", "payments.stripe.secret_key"),
    ]

    public static func load(file: String?, environment: [String: String] = ProcessInfo.processInfo.environment) throws -> HeraldConfig {
        var config = HeraldConfig()
        if let file {
            config = try parse(contentsOf: file)
        }
        try applyEnvironment(environment, to: &config)
        return config
    }

    public static func parse(contentsOf path: String) throws -> HeraldConfig {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ConfigurationError(problems: [FieldError(field: "config", message: "cannot read \(path)")])
        }
        return try parse(text, isYAML: !path.lowercased().hasSuffix(".json"))
    }

    /// Parses a config document; YAML is a superset of JSON, but JSON files go through the
    /// JSON parser for its exact error positions.
    public static func parse(_ text: String, isYAML: Bool) throws -> HeraldConfig {
        let data: Data
        if isYAML {
            do {
                guard let json = try YAMLConfigReader.json(from: text) else { return HeraldConfig() }
                data = json
            } catch let problem as YAMLConfigReader.Problem {
                throw ConfigurationError(problems: [FieldError(field: "config", message: problem.message)])
            }
        } else {
            data = Data(text.utf8)
        }
        do {
            let tree = try JSONDecoder().decode(JSONValue.self, from: data)
            return try JSONValueDecoder(.configuration).decode(HeraldConfig.self, from: tree)
        } catch let error as DecodingError {
            throw ConfigurationError(problems: [describe(error)])
        }
    }

    static func describe(_ error: DecodingError) -> FieldError {
        func path(_ keys: [any CodingKey]) -> String {
            keys.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .typeMismatch(let type, let context):
            return FieldError(field: path(context.codingPath), message: "has the wrong type (expected \(type))")
        case .valueNotFound(_, let context):
            return FieldError(field: path(context.codingPath), message: "must not be null")
        case .keyNotFound(let key, let context):
            return FieldError(field: path(context.codingPath + [key]), message: "is required")
        case .dataCorrupted(let context):
            return FieldError(field: context.codingPath.isEmpty ? "config" : path(context.codingPath), message: "is not valid: \(context.debugDescription)")
        @unknown default:
            return FieldError(field: "config", message: "is not valid")
        }
    }

    static func applyEnvironment(_ environment: [String: String], to config: inout HeraldConfig) throws {
        func value(_ name: String) -> String? {
            guard let value = environment[name], !value.isEmpty else { return nil }
            return value
        }
        if let host = value("HERALD_HOST") { config.server.host = host }
        if let port = value("HERALD_PORT") {
            guard let number = Int(port) else {
                throw ConfigurationError(problems: [FieldError(field: "HERALD_PORT", message: "must be a number")])
            }
            config.server.port = number
        }
        if let url = value("HERALD_DATABASE_URL") { config.database.url = url }
        if let dir = value("HERALD_DATA_DIR") { config.dataDir = dir }
        if let secret = value("HERALD_JWT_SECRET") { config.auth.jwtSecret = secret }
        if let jwks = value("HERALD_JWKS_FILE") { config.auth.jwksFile = jwks }
        if let url = value("HERALD_JWKS_URL") { config.auth.jwksURL = url }
        if let issuer = value("HERALD_JWT_ISSUER") { config.auth.issuer = issuer }
        if let audience = value("HERALD_JWT_AUDIENCE") { config.auth.audience = audience }
        if let level = value("HERALD_LOG_LEVEL") { config.logging.level = try choice(level, "HERALD_LOG_LEVEL") }
        if let key = value("HERALD_STRIPE_SECRET_KEY") { config.payments.stripe.secretKey = key }
        if let format = value("HERALD_LOG_FORMAT") { config.logging.format = try choice(format, "HERALD_LOG_FORMAT") }
        if let endpoint = value("HERALD_OTLP_ENDPOINT") { config.tracing.otlpEndpoint = endpoint }
    }

    /// An environment variable's word for a `ConfigChoice` setting, or the error naming it.
    static func choice<Choice: ConfigChoice>(_ text: String, _ variable: String) throws -> Choice {
        guard let value = Choice(rawValue: text) else {
            throw ConfigurationError(problems: [FieldError(field: variable, message: "must be \(Choice.choices)")])
        }
        return value
    }
}
