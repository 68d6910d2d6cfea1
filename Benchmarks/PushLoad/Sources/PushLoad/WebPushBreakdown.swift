import ArgumentParser
import Crypto
import Foundation
import HeraldPush

/// `webpush-breakdown`: the cost of each step of one Web Push message, in CPU microseconds,
/// to explain `webpush-encrypt` (each step alone in a loop, on one thread).
struct WebPushBreakdown: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "webpush-breakdown", abstract: "Per-step CPU cost of Web Push encryption and VAPID.")

    @Option(help: "Iterations per step.") var iterations = 5000

    func run() async throws {
        let userAgent = P256.KeyAgreement.PrivateKey()
        let uaPublic = userAgent.publicKey.x963Representation
        let auth = SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }
        let plaintext = Data(SampleMessage.webPushPlaintext.utf8)
        let server = P256.KeyAgreement.PrivateKey()
        let signing = P256.Signing.PrivateKey()
        let vapid = VAPIDKey(privateKey: signing)
        let endpoint = "https://fcm.googleapis.com/fcm/send/sub-1"
        let subject = "mailto:ops@example.com"
        let salt = WebPushEncryption.randomSalt()
        let uaKey = try P256.KeyAgreement.PublicKey(x963Representation: uaPublic)
        let shared = try server.sharedSecretFromKeyAgreement(with: uaKey)
        var sink = 0
        var fields: [(String, JSON)] = [("bench", .string("webpush-breakdown")), ("impl", .string("herald")), ("cpus", .string(allowedCPUs()))]

        func step(_ name: String, _ body: () throws -> Int) rethrows {
            for _ in 0..<200 { sink &+= try body() }
            let cpu0 = processCPUMicros()
            for _ in 0..<iterations { sink &+= try body() }
            fields.append((name + "_us", .double((processCPUMicros() - cpu0) / Double(iterations))))
        }
        try step("encrypt_total") {
            try WebPushEncryption.encrypt(plaintext: plaintext, userAgentPublicKey: uaPublic, authSecret: auth).count
        }
        try step("authorization_cached") { try vapid.authorization(endpoint: endpoint, subject: subject, now: Date()).utf8.count }
        try step("authorization_signed") {
            try VAPIDKey(privateKey: signing).authorization(endpoint: endpoint, subject: subject, now: Date()).utf8.count
        }
        step("p256_keygen") { P256.KeyAgreement.PrivateKey().rawRepresentation.count }
        step("p256_keygen_not_compact") { P256.KeyAgreement.PrivateKey(compactRepresentable: false).rawRepresentation.count }
        try step("p256_key_from_random_scalar") {
            // A uniformly random scalar (32 random bytes; values >= n are rejected by the init and retried).
            while true {
                let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
                if let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: bytes) { return key.rawRepresentation.count }
            }
        }
        step("server_public_x963") { server.publicKey.x963Representation.count }
        try step("ua_public_import_x963") { try P256.KeyAgreement.PublicKey(x963Representation: uaPublic).rawRepresentation.count }
        try step("ecdh") { try server.sharedSecretFromKeyAgreement(with: uaKey).withUnsafeBytes { $0.count } }
        step("hkdf_3x") {
            let ikm = shared.hkdfDerivedSymmetricKey(using: SHA256.self, salt: auth, sharedInfo: Data("WebPush: info\0".utf8) + uaPublic, outputByteCount: 32)
            let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: aes128gcm\0".utf8), outputByteCount: 16)
            let nonce = HKDF<SHA256>.deriveKey(inputKeyMaterial: ikm, salt: salt, info: Data("Content-Encoding: nonce\0".utf8), outputByteCount: 12)
            return key.bitCount + nonce.bitCount
        }
        let key = SymmetricKey(size: .bits128)
        try step("aes_gcm_seal") { try AES.GCM.seal(plaintext, using: key).ciphertext.count }
        try step("ecdsa_sign") { try signing.signature(for: plaintext).rawRepresentation.count }
        step("vapid_public_base64url") { vapid.publicKeyBase64URL.utf8.count }
        try step("vapid_audience") { try VAPIDKey.audience(of: endpoint).utf8.count }
        step("random_salt") { WebPushEncryption.randomSalt().count }
        fields.append(("sink", .int(sink & 1)))
        emit(fields)
    }
}
