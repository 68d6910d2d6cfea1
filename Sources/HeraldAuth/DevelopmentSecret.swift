import Foundation

/// The HS256 secret used when `HERALD_JWT_SECRET` is not set: generated once, kept in the
/// data dir with owner-only permissions, so tokens from `herald token` keep working across
/// restarts of a development server.
public enum DevelopmentSecret {
    public static let fileName = "jwt-secret"

    public static func loadOrCreate(dataDir: String) throws -> String {
        let url = URL(fileURLWithPath: dataDir).appendingPathComponent(fileName)
        if let existing = try? String(contentsOf: url, encoding: .utf8) {
            let trimmed = existing.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.utf8.count >= 32 { return trimmed }
        }
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<48).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        let secret = Data(bytes).base64EncodedString()
        // Create with 0600 before writing the secret, so it is never readable by others.
        _ = FileManager.default.createFile(atPath: url.path, contents: nil, attributes: [.posixPermissions: 0o600])
        try Data(secret.utf8).write(to: url)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: url.path)
        return secret
    }
}
