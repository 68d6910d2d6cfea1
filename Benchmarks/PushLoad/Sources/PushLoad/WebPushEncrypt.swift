import ArgumentParser
import Crypto
import Foundation
import HeraldPush

/// `webpush-encrypt`: Web Push messages built per second on one thread, without the network.
///
/// One message is what WebPushSender does before its HTTP request: the VAPID `Authorization`
/// header (`VAPIDKey.authorization`) and the RFC 8291 body (`WebPushEncryption.encrypt`: a
/// fresh P-256 key and salt, ECDH, two HKDFs, AES-128-GCM) for the same 291-byte plaintext
/// pywebpush_encrypt.py encrypts. Two modes, measured one after the other:
/// - `sign-each`: a new VAPID JWT (ES256 signature) for every message, as pywebpush's
///   `webpush()` does: a new `VAPIDKey` per message, so its token cache is always empty;
/// - `cached`: Herald's production path: one `VAPIDKey`, whose token is cached per audience
///   for 11 of its 12 hours, so the steady state is encryption plus a cache lookup.
struct WebPushEncrypt: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "webpush-encrypt", abstract: "Web Push encrypt + VAPID messages/s on one thread.")

    @Option(help: "Seconds per mode.") var seconds: Double = 10
    @Option(help: "sign-each, cached or both.") var mode = "both"
    @Option(help: "Distinct subscriptions cycled through.") var subscriptions = 100

    func run() async throws {
        let modes = mode == "both" ? ["sign-each", "cached"] : [mode]
        let plaintext = Data(SampleMessage.webPushPlaintext.utf8)
        // As stored on the device record: base64url text, decoded for every message as WebPushSender.send does.
        let subs: [(endpoint: String, p256dh: String, auth: String)] = (0..<subscriptions).map { i in
            (
                "https://fcm.googleapis.com/fcm/send/sub-\(i)", base64URL(P256.KeyAgreement.PrivateKey().publicKey.x963Representation),
                base64URL(SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) })
            )
        }
        let privateKey = P256.Signing.PrivateKey()
        let shared = VAPIDKey(privateKey: privateKey)
        let subject = "mailto:ops@example.com"
        for mode in modes {
            guard mode == "sign-each" || mode == "cached" else { throw ValidationError("--mode must be sign-each, cached or both") }
            let clock = ContinuousClock()
            // A short warmup (first signature, allocator), then the measured run.
            var messages = 0
            var bytes = 0
            var headerBytes = 0
            var phaseEnd = clock.now + .milliseconds(500)
            var measuring = false
            var cpu0 = 0.0
            var t0 = clock.now
            while true {
                for _ in 0..<50 {
                    let sub = subs[messages % subs.count]
                    let vapid = mode == "sign-each" ? VAPIDKey(privateKey: privateKey) : shared
                    let authorization = try vapid.authorization(endpoint: sub.endpoint, subject: subject, now: Date())
                    guard let key = base64URLDecode(sub.p256dh), let auth = base64URLDecode(sub.auth) else { throw ValidationError("bad key") }
                    let body = try WebPushEncryption.encrypt(plaintext: plaintext, userAgentPublicKey: key, authSecret: auth)
                    bytes &+= body.count
                    headerBytes &+= authorization.utf8.count
                    messages += 1
                }
                if clock.now >= phaseEnd {
                    if measuring { break }
                    measuring = true
                    messages = 0
                    bytes = 0
                    cpu0 = processCPUMicros()
                    t0 = clock.now
                    phaseEnd = t0 + .milliseconds(Int64(seconds * 1000))
                }
            }
            let elapsed = Double((clock.now - t0) / .microseconds(1)) / 1_000_000
            let cpu = processCPUMicros() - cpu0
            emit([
                ("bench", .string("webpush-encrypt")), ("impl", .string("herald")), ("mode", .string(mode)),
                ("cpus", .string(allowedCPUs())), ("duration_s", .double(elapsed)), ("messages", .int(messages)),
                ("messages_per_s", .double(Double(messages) / elapsed)), ("cpu_us_per_message", .double(cpu / Double(max(1, messages)))),
                ("messages_per_cpu_s", .double(Double(messages) / (cpu / 1_000_000))),
                ("plaintext_bytes", .int(plaintext.count)), ("body_bytes", .int(bytes / max(1, messages))),
                ("authorization_bytes", .int(headerBytes / max(1, messages))),
            ])
        }
    }
}

func base64URL(_ data: Data) -> String {
    data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// What WebPushBase64URL.decode (internal to HeraldPush) does, for the per-message key decoding.
func base64URLDecode(_ text: String) -> Data? {
    var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
    return Data(base64Encoded: standard)
}
