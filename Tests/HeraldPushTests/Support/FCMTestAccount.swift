import Foundation
import JWTKit
import _CryptoExtras

/// A throwaway Google service account: a fresh RSA key and a key file in the format the
/// Firebase console downloads, whose `token_uri` points at a mock.
struct FCMTestAccount: Sendable {
    static let clientEmail = "herald-push@p.iam.gserviceaccount.com"
    static let keyID = "0123456789abcdef0123456789abcdef01234567"

    /// Why one key for the whole suite: 2048-bit generation is the slowest step of a test.
    private static let sharedKey = Result { try _RSA.Signing.PrivateKey(keySize: .bits2048) }

    let privateKeyPEM: String
    let publicKeyPEM: String

    init() throws {
        let key = try Self.sharedKey.get()
        // PKCS#8 (`BEGIN PRIVATE KEY`), exactly what Google puts in `private_key`.
        privateKeyPEM = key.pkcs8PEMRepresentation
        publicKeyPEM = key.publicKey.pemRepresentation
    }

    /// The key file's fields; tests remove or change some to check the errors.
    func json(tokenURI: String, projectID: String? = "p") -> [String: Any] {
        var object: [String: Any] = [
            "type": "service_account",
            "private_key_id": Self.keyID,
            "private_key": privateKeyPEM,
            "client_email": Self.clientEmail,
            "client_id": "123456789012345678901",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": tokenURI,
            "auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
            "universe_domain": "googleapis.com",
        ]
        if let projectID { object["project_id"] = projectID }
        return object
    }

    /// Writes `object` as a key file in a temporary directory and returns its path.
    static func write(_ object: [String: Any]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fcm-sa-\(UUID().uuidString).json").path
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted]).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// Checks an assertion's RS256 signature with the public key (as Google would) and
    /// returns its claims.
    func verify(_ assertion: String) async throws -> GoogleAssertionClaims {
        let keys = JWTKeyCollection()
        await keys.add(rsa: try Insecure.RSA.PublicKey(pem: publicKeyPEM), digestAlgorithm: .sha256, kid: JWKIdentifier(string: Self.keyID))
        return try await keys.verify(assertion, as: GoogleAssertionClaims.self)
    }

    /// The JWT header (`alg`, `kid`, `typ`) of an assertion.
    static func header(of jwt: String) -> [String: Any]? {
        guard let first = jwt.split(separator: ".").first else { return nil }
        var base64 = first.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        guard let data = Data(base64Encoded: base64) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    /// `application/x-www-form-urlencoded` fields of a request body.
    static func formFields(_ body: Data) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in String(decoding: body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            let value = parts[1].replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? parts[1]
            fields[parts[0]] = value
        }
        return fields
    }
}

/// What Google's token endpoint reads from a JWT-bearer assertion.
struct GoogleAssertionClaims: JWTPayload, Equatable {
    var iss: String
    var scope: String
    var aud: String
    var iat: Int
    var exp: Int

    /// Time is checked by the tests against the injected clock, not the real one.
    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
