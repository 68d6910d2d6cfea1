import Crypto
import Foundation
import HeraldCore
import HeraldMockProviders
import HeraldNotifications
import HeraldPush
import HeraldSchema
import HeraldStorage
import HeraldTestSupport
import Logging
import Testing

@testable import HeraldServer

/// `herald doctor`'s checks against a real SQLite file, an address where no PostgreSQL
/// listens, and a mock APNs over HTTP/2 with TLS that checks the provider token's signature,
/// team and key id the way APNs does before it looks at the device token.
@Suite struct DoctorTests {
    static let logger: Logger = {
        var logger = Logger(label: "doctor-test")
        logger.logLevel = .critical
        return logger
    }()

    static func directory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("doctor-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A mock APNs answering as Apple does: 403 InvalidProviderToken unless the bearer token is
    /// an ES256 JWT signed by `key` with `kid` KEY1234567 and `iss` TEAM123456, else 400
    /// BadDeviceToken for the made-up token.
    static func mockAPNs(accepting key: P256.Signing.PublicKey) async throws -> MockPushServer {
        try await MockPushServer.start { request in
            guard let bearer = request.header("authorization"), bearer.hasPrefix("bearer ") else {
                return .json(403, ["reason": "MissingProviderToken"])
            }
            let parts = bearer.dropFirst("bearer ".count).split(separator: ".").map(String.init)
            guard parts.count == 3, let header = decode(parts[0]), let claims = decode(parts[1]), let signature = base64URL(parts[2]),
                let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature),
                key.isValidSignature(ecdsa, for: Data("\(parts[0]).\(parts[1])".utf8)),
                header["alg"] as? String == "ES256", header["kid"] as? String == "KEY1234567", claims["iss"] as? String == "TEAM123456"
            else { return .json(403, ["reason": "InvalidProviderToken"]) }
            return .json(400, ["reason": "BadDeviceToken"])
        }
    }

    static func decode(_ part: String) -> [String: Any]? {
        guard let data = base64URL(part) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
    }

    static func base64URL(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }

    static func apns(_ server: MockPushServer, key: P256.Signing.PrivateKey, teamID: String = "TEAM123456", in directory: String) throws -> APNsConfig {
        let file = directory + "/AuthKey_KEY1234567.p8"
        try key.pemRepresentation.write(toFile: file, atomically: true, encoding: .utf8)
        return APNsConfig(teamID: teamID, keyID: "KEY1234567", privateKeyFile: file, topic: "com.example.rider", baseURL: server.baseURL, caFile: server.caFile)
    }

    @Test func apnsCredentialsAreProbedAtTheEndpointAndRefusalsNamed() async throws {
        let directory = try Self.directory()
        let key = P256.Signing.PrivateKey()
        try await withTeardown { teardown in
            let server = try await Self.mockAPNs(accepting: key.publicKey)
            teardown.add("mock APNs") { try await server.stop() }
            var push = PushConfig()
            push.requestTimeoutMs = 300_000  // the maximum: a loaded machine answers late, not never
            push.apns = try Self.apns(server, key: key, in: directory)
            let accepted = await Doctor.push(push, dryRun: false, clock: SystemClock())
            #expect(
                accepted.first
                    == DoctorFinding(
                        .ok, "push.apns", "\(server.baseURL) accepted the credentials (a made-up device token was refused as expected: BadDeviceToken)"))
            #expect(accepted.dropFirst().map(\.status) == [.skipped, .skipped])
            #expect(server.requests.count == 1 && server.requests[0].path == "/3/device/" + String(repeating: "0", count: 64))

            // A wrong team id: APNs refuses the provider token, and the line says what to check.
            push.apns = try Self.apns(server, key: key, teamID: "WRONG12345", in: directory)
            let refused = await Doctor.push(push, dryRun: false, clock: SystemClock())
            #expect(refused.first?.status == .failed)
            #expect(
                refused.first?.message.contains("refused: InvalidProviderToken — check push.apns.team_id, key_id and the .p8 file belong together") == true,
                "\(refused)")
            // Another key than the one Apple holds: refused too (the mock checks the signature).
            push.apns = try Self.apns(server, key: P256.Signing.PrivateKey(), in: directory)
            #expect(await Doctor.push(push, dryRun: false, clock: SystemClock()).first?.status == .failed)

            // --dry-run: the key is read and used, nobody is contacted.
            let before = server.requests.count
            push.apns = try Self.apns(server, key: key, in: directory)
            let dry = await Doctor.push(push, dryRun: true, clock: SystemClock())
            #expect(dry.first == DoctorFinding(.ok, "push.apns", "credentials read and usable; \(server.baseURL) not contacted (--dry-run)"))
            #expect(server.requests.count == before)
        }
    }

    @Test func anUnreadableOrWrongKeyFileIsNamed() async throws {
        let directory = try Self.directory()
        var push = PushConfig()
        push.apns = APNsConfig(teamID: "TEAM123456", keyID: "KEY1234567", privateKeyFile: directory + "/missing.p8", topic: "com.example.rider")
        let missing = await Doctor.push(push, dryRun: true, clock: SystemClock())
        #expect(missing.first?.status == .failed)
        #expect(missing.first?.message.contains("private_key_file \"\(directory)/missing.p8\" cannot be read") == true, "\(missing)")
        try "not a key".write(toFile: directory + "/bad.p8", atomically: true, encoding: .utf8)
        push.apns?.privateKeyFile = directory + "/bad.p8"
        let wrong = await Doctor.push(push, dryRun: true, clock: SystemClock())
        #expect(wrong.first?.message.contains("is not a P-256 key in PKCS#8 PEM") == true, "\(wrong)")
        // Each finding is one line, whatever the error carried.
        #expect(wrong.allSatisfy { !$0.description.contains("\n") })
    }

    // A hang is what the time limit reports; no bound on the elapsed time is checked (a loaded
    // machine delays the doctor's 1 s deadline by seconds).
    @Test(.timeLimit(.minutes(10)))
    func theDatabaseIsReadNotChanged() async throws {
        let directory = try Self.directory()
        var config = HeraldConfig()
        config.dataDir = directory
        let path = directory + "/herald.sqlite"
        // Not there yet: fine, `serve` creates it; and the doctor did not.
        #expect(await Doctor.database(config, logger: Self.logger, deadline: Patience.limit).status == .ok)
        #expect(!FileManager.default.fileExists(atPath: path))

        let database = try await SQLiteDatabase.open(path: path, logger: Self.logger)
        try await HeraldSchema.migrator.migrate(database, logger: Self.logger)
        let current = await Doctor.database(config, logger: Self.logger, deadline: Patience.limit)
        #expect(current == DoctorFinding(.ok, "database", "sqlite:\(path) answers; schema up to date (\(HeraldSchema.migrator.ids.count) migrations)"))

        // A step behind: pending, and still pending after the check (nothing applied).
        try await database.withConnection { db in try await db.raw("DELETE FROM herald_migrations WHERE module = 'realtime' AND version = 2").run() }
        let behind = await Doctor.database(config, logger: Self.logger, deadline: Patience.limit)
        #expect(
            behind.status == .warning && behind.message.hasSuffix("1 migration(s) pending, applied by `herald migrate` or `serve`: realtime/2"), "\(behind)")
        #expect(try await HeraldSchema.migrator.applied(database).contains(MigrationID(module: "realtime", version: 2)) == false)

        // Made by a newer Herald: refused, as `serve` would.
        try await database.withConnection { db in
            try await db.raw("INSERT INTO herald_migrations (module, version, name, applied_at) VALUES ('realtime', 99, 'future', 0)").run()
        }
        let newer = await Doctor.database(config, logger: Self.logger, deadline: Patience.limit)
        #expect(newer.status == .failed && newer.message.contains("realtime/99"), "\(newer)")
        await database.close()

        // Nobody listening: a failure within the deadline, not a hang.
        config.database.url = "postgres://herald@127.0.0.1:1/herald"
        let unreachable = await Doctor.database(config, logger: Self.logger, deadline: .seconds(1))
        #expect(unreachable.status == .failed && unreachable.message.hasPrefix("postgres://herald@127.0.0.1:1/herald does not answer"), "\(unreachable)")
    }

    @Test func eachConfigurationProblemIsALine() async throws {
        var config = HeraldConfig()
        config.server.port = 70_000
        config.realtime.pingIntervalMs = 1
        let findings = Doctor.configuration(config)
        #expect(findings.count == 2 && findings.allSatisfy { $0.status == .failed && $0.check == "config" }, "\(findings)")
        #expect(findings.first?.message == "server.port: must be between 0 and 65535")
        #expect(Doctor.configuration(HeraldConfig()) == [DoctorFinding(.ok, "config", "every section valid")])
    }
}
