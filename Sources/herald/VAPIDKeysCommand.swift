import ArgumentParser
import HeraldPush

/// `herald vapid-keys`: a new Web Push identity, printed as the config block that uses it.
///
/// Why a command rather than "run openssl": the config takes the raw scalar as base64url,
/// which openssl cannot print directly, and the public key must be handed to the web app in
/// the exact uncompressed base64url form browsers expect.
struct VAPIDKeysCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vapid-keys",
        abstract: "Print a new VAPID key pair for Web Push, as YAML to paste into the config."
    )

    @Option(help: "The contact push services may use (the VAPID sub claim): mailto: or https: URI.")
    var subject: String = "mailto:you@example.com"

    func validate() throws {
        do {
            try VAPIDKey.validateSubject(subject)
        } catch {
            throw ValidationError("--subject must be a mailto: or https: URI, e.g. mailto:ops@example.com")
        }
    }

    func run() throws {
        print(Self.yaml(for: VAPIDKey.generate(), subject: subject), terminator: "")
    }

    /// Values are double-quoted (and escaped) so a key starting with '-' or a subject with a
    /// '#' can never read as YAML syntax.
    static func yaml(for key: VAPIDKey, subject: String) -> String {
        let subject = subject.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return """
            push:
              webpush:
                vapid_private_key: "\(key.privateKeyBase64URL)"
                subject: "\(subject)"
            # public key (for browsers): \(key.publicKeyBase64URL)
            # Keep vapid_private_key secret. Replacing it invalidates every existing browser subscription.

            """
    }
}
