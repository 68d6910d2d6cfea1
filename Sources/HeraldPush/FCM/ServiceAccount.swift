import Foundation
import HeraldCore
import JWTKit

/// The parts of a Google service-account key file that FCM's OAuth2 flow needs.
///
/// Why parse and check everything at startup: a wrong file otherwise surfaces only as a
/// rejected token request on the first push, long after deploy; a bad key must stop the
/// server with a message that names the field, never crash it or leak the key.
public struct ServiceAccount: Sendable, Equatable {
    /// Why optional: `FCMConfig.projectID` may supply it instead.
    public var projectID: String?
    /// The assertion's `iss`.
    public var clientEmail: String
    /// The assertion's `aud` and where it is exchanged (unless the config overrides it).
    public var tokenURI: String
    /// Sent as the assertion's `kid` so Google picks the right public key at once.
    public var privateKeyID: String?
    /// Parsed once here so signing can never fail on the key later.
    public var privateKey: Insecure.RSA.PrivateKey

    /// What a file made before `token_uri` was written into every key means.
    public static let defaultTokenURI = "https://oauth2.googleapis.com/token"

    public init(
        projectID: String?, clientEmail: String, tokenURI: String = Self.defaultTokenURI, privateKeyID: String? = nil,
        privateKey: Insecure.RSA.PrivateKey
    ) {
        self.projectID = projectID
        self.clientEmail = clientEmail
        self.tokenURI = tokenURI
        self.privateKeyID = privateKeyID
        self.privateKey = privateKey
    }

    /// Reads and checks the key file at `path`.
    public static func load(file path: String) throws -> ServiceAccount {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ServiceAccountError(source: path, problem: "cannot be read (\((error as NSError).localizedDescription))")
        }
        return try ServiceAccount(json: data, source: path)
    }

    /// Parses the JSON of a key file; `source` names it in errors.
    public init(json: Data, source: String = "service account") throws {
        guard case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: json) else {
            throw ServiceAccountError(source: source, problem: "is not a JSON object (expected a service-account key file)")
        }
        func string(_ field: String, required: Bool) throws -> String? {
            switch object[field] {
            case nil, .null?:
                if required { throw ServiceAccountError(source: source, field: field, problem: "is missing") }
                return nil
            case .string(let value)?:
                let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
                if trimmed.isEmpty { throw ServiceAccountError(source: source, field: field, problem: "is empty") }
                return trimmed
            case let other?:
                throw ServiceAccountError(source: source, field: field, problem: "must be a string, got \(other.typeName)")
            }
        }

        // Why insist on the type: an OAuth client file or a user credential has some of the
        // same fields and would otherwise fail later with a confusing `invalid_grant`.
        let type = try string("type", required: true)
        guard type == "service_account" else {
            throw ServiceAccountError(
                source: source, field: "type", problem: "must be \"service_account\", got \"\(type ?? "")\"")
        }
        let email = try string("client_email", required: true) ?? ""
        guard email.contains("@") else {
            throw ServiceAccountError(source: source, field: "client_email", problem: "is not an email address")
        }
        let tokenURI = try string("token_uri", required: false) ?? Self.defaultTokenURI
        guard Self.isHTTPURL(tokenURI) else {
            throw ServiceAccountError(source: source, field: "token_uri", problem: "is not an http(s) URL")
        }
        let pem = try string("private_key", required: true) ?? ""
        self.init(
            projectID: try string("project_id", required: false), clientEmail: email, tokenURI: tokenURI,
            privateKeyID: try string("private_key_id", required: false),
            privateKey: try Self.parseKey(pem, source: source))
    }

    /// Why the escaped-newline repair: keys pasted through environment variables or YAML
    /// often arrive with literal `\n` instead of line breaks, which no PEM parser accepts.
    static func parseKey(_ text: String, source: String) throws -> Insecure.RSA.PrivateKey {
        let pem = text.contains("\n") ? text : text.replacingOccurrences(of: "\\n", with: "\n")
        guard pem.contains("-----BEGIN") else {
            throw ServiceAccountError(source: source, field: "private_key", problem: "is not a PEM private key")
        }
        do {
            return try Insecure.RSA.PrivateKey(pem: pem)
        } catch {
            // The underlying error is not shown: some parsers echo the input, which is the key.
            throw ServiceAccountError(
                source: source, field: "private_key", problem: "is not a usable RSA private key (PKCS#8 PEM, at least 2048 bits)")
        }
    }

    static func isHTTPURL(_ text: String) -> Bool {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), let host = url.host, !host.isEmpty else {
            return false
        }
        return scheme == "https" || scheme == "http"
    }
}

/// A service-account key file that cannot be used, saying which field is wrong and why.
/// Never carries the key material itself.
public struct ServiceAccountError: Error, Sendable, Equatable, CustomStringConvertible {
    public var source: String
    public var field: String?
    public var problem: String

    public init(source: String, field: String? = nil, problem: String) {
        self.source = source
        self.field = field
        self.problem = problem
    }

    public var description: String {
        if let field { return "FCM service account \(source): \"\(field)\" \(problem)" }
        return "FCM service account \(source) \(problem)"
    }
}
