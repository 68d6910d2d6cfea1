import Crypto
import Foundation
import HeraldCore
import HeraldNotifications
import HeraldPush
import HeraldStorage
import Logging

/// A fresh SQLite database with the notifications tables (Live Activities), in a temporary
/// directory that `remove()` deletes.
struct BenchDatabase {
    let database: SQLiteDatabase
    let directory: String

    static func notifications(_ name: String, logger: Logger) async throws -> BenchDatabase {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("pushload-\(name)-\(UUID().uuidString)").path
        let database = try await SQLiteDatabase.open(path: directory + "/herald.sqlite", logger: logger)
        try await Migrator(sets: [NotificationMigrations.set]).migrate(database, logger: logger)
        return BenchDatabase(database: database, directory: directory)
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// Herald's APNs sender to the mock, with a new key (its file removed once the sender has
/// read it).
func mockAPNsSender(url: String, ca: String, connections: Int) async throws -> (sender: APNsSender, client: APNsClient) {
    let keyPath = try writeAPNsKey(pem: P256.Signing.PrivateKey().pemRepresentation)
    defer { try? FileManager.default.removeItem(atPath: keyPath) }
    let apns = APNsConfig(
        teamID: "TEAM123456", keyID: "KEY1234567", privateKeyFile: keyPath, topic: "com.example.herald", baseURL: url, connections: connections,
        caFile: ca)
    let client = try APNsSender.makeClient(apns)
    return (try await APNsSender(config: apns, client: client, clock: SystemClock()), client)
}
