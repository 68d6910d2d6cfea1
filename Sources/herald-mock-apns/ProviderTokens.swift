import Crypto
import Foundation

/// The apps the mock knows (`--app TOPIC=KEY_ID=KEY.pem`): each topic's signing key, so that a
/// push carrying another app's provider token is refused as APNs refuses it
/// (403 `InvalidProviderToken`), and the log can say whose token and topic each push had.
struct ProviderTokens: Sendable {
    struct App: Sendable {
        let keyID: String
        let publicKey: P256.Signing.PublicKey
    }

    var apps: [String: App] = [:]

    /// `TOPIC=KEY_ID=PATH` with the key in PEM (the app's private `.p8`, or its public key).
    mutating func add(_ argument: String) throws {
        let parts = argument.split(separator: "=", maxSplits: 2).map(String.init)
        guard parts.count == 3 else { throw Problem("--app wants TOPIC=KEY_ID=KEY.pem, not \(argument)") }
        let pem = try String(contentsOfFile: parts[2], encoding: .utf8)
        let key: P256.Signing.PublicKey
        if let privateKey = try? P256.Signing.PrivateKey(pemRepresentation: pem) {
            key = privateKey.publicKey
        } else {
            key = try P256.Signing.PublicKey(pemRepresentation: pem)
        }
        apps[parts[0]] = App(keyID: parts[1], publicKey: key)
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// What the provider token says: its `kid` and `iss`, and whether it is valid for `topic`
    /// (signed by that topic's key; any token when no apps were given). A Live Activity's
    /// topic (`<bundle>.push-type.liveactivity`) belongs to its bundle's app.
    func check(authorization: String?, topic: String?) -> (keyID: String?, issuer: String?, valid: Bool) {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else { return (nil, nil, false) }
        let jwt = authorization.dropFirst("bearer ".count)
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let header = Self.json(parts[0]), let claims = Self.json(parts[1]) else { return (nil, nil, false) }
        let keyID = header["kid"] as? String
        let issuer = claims["iss"] as? String
        guard !apps.isEmpty else { return (keyID, issuer, true) }
        let bundle = topic.map { $0.components(separatedBy: ".push-type.").first ?? $0 }
        guard let bundle, let app = apps[bundle], app.keyID == keyID, let signature = Self.bytes(parts[2]),
            let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        else { return (keyID, issuer, false) }
        return (keyID, issuer, app.publicKey.isValidSignature(ecdsa, for: Data("\(parts[0]).\(parts[1])".utf8)))
    }

    static func bytes(_ base64URL: String) -> Data? {
        var text = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }

    static func json(_ base64URL: String) -> [String: Any]? {
        bytes(base64URL).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }
}
