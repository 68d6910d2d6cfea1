import Foundation
import HeraldAuth
import HeraldCore
import HeraldNotifications
import HeraldPush
import HeraldSchema
import HeraldStorage
import HeraldTransit
import Logging

/// `herald doctor`: checks a node's setup before it serves — the configuration, the database,
/// and each push provider's credentials against the provider's real endpoint.
///
/// Why probe the providers with a made-up device token: APNs and FCM check the credentials
/// before the token, so a refused token (`BadDeviceToken`, `INVALID_ARGUMENT`) proves the key,
/// team, topic and account are accepted, and nothing reaches any device. `dryRun` checks only
/// what can be checked without a request (files, keys, signing). Nothing is written: the
/// database is read, never migrated.
public enum Doctor {
    /// APNs device tokens are 32 bytes in hex; no device has this one.
    static let apnsProbeToken = String(repeating: "0", count: 64)
    /// Not an FCM registration token (FCM answers INVALID_ARGUMENT once the caller is authorised).
    static let fcmProbeToken = "herald-doctor-probe-not-a-registration-token"

    public static func check(
        _ config: HeraldConfig, dryRun: Bool, clock: any HeraldClock = SystemClock(), logger: Logger,
        databaseDeadline: Duration = .seconds(5)
    ) async -> [DoctorFinding] {
        var findings = configuration(config)
        findings.append(await authentication(config, clock: clock))
        let databaseFinding = await database(config, logger: logger, deadline: databaseDeadline)
        findings.append(databaseFinding)
        if databaseFinding.status == .ok, databaseFinding.message.contains("schema up to date") {
            findings.append(await storedTransit(config, logger: logger))
        }
        findings += await push(config.push, dryRun: dryRun, clock: clock)
        return findings
    }

    /// The stored feeds and realtime messages, loaded as a node loads them: what a node would
    /// skip (it serves on without it, and `/readyz` names it too).
    static func storedTransit(_ config: HeraldConfig, logger: Logger) async -> DoctorFinding {
        do {
            let database = try await DatabaseFactory.open(try config.resolvedDatabaseURL(), config: config, logger: logger)
            let (checked, problems) = try await database.running {
                try await TransitLoader.storedDataProblems(database: database, config: config.transit)
            }
            guard !problems.isEmpty else { return DoctorFinding(.ok, "transit", "\(checked) stored feed version(s) and realtime message(s) load") }
            let named = problems.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value.message)" }.joined(separator: "; ")
            return DoctorFinding(.warning, "transit", "stored data a node skips: \(named)")
        } catch {
            return DoctorFinding(.failed, "transit", "the stored feeds could not be read: \(short(error))")
        }
    }

    static func configuration(_ config: HeraldConfig) -> [DoctorFinding] {
        let problems = config.validationErrors()
        guard problems.isEmpty else { return problems.map { DoctorFinding(.failed, "config", "\($0.field): \($0.message)") } }
        return [DoctorFinding(.ok, "config", "every section valid")]
    }

    static func authentication(_ config: HeraldConfig, clock: any HeraldClock) async -> DoctorFinding {
        if let url = config.auth.jwksURL {
            let remote = RemoteJWKS(url: url, minRefetch: .seconds(config.auth.jwksMinRefetchSeconds), logger: Logger(label: "herald.doctor"))
            let fetched = await remote.refresh()
            let count = remote.keyCount ?? 0
            await remote.close()
            return fetched
                ? DoctorFinding(.ok, "auth", "tokens checked against \(count) key(s) from \(url)")
                : DoctorFinding(.failed, "auth", "auth.jwks_url: no usable JWKS could be fetched from \(url)")
        }
        if let file = config.auth.jwksFile {
            do {
                _ = try await HeraldApplication.makeVerifier(
                    config.auth, secret: config.auth.jwtSecret ?? "unused-by-jwks-check", clock: clock, logger: Logger(label: "herald.doctor"))
                return DoctorFinding(.ok, "auth", "tokens checked against the JWKS in \(file)")
            } catch let error as ConfigurationError {
                return DoctorFinding(.failed, "auth", error.problems.map { "\($0.field) \($0.message)" }.joined(separator: "; "))
            } catch {
                return DoctorFinding(.failed, "auth", "auth.jwks_file: \(short(error))")
            }
        }
        if config.auth.jwtSecret != nil { return DoctorFinding(.ok, "auth", "HS256 tokens with the configured secret") }
        return DoctorFinding(
            .warning, "auth",
            "no auth.jwt_secret, auth.jwks_file or auth.jwks_url: the development secret in \(config.dataDir) signs tokens (fine on a laptop, not in production)"
        )
    }

    static func database(_ config: HeraldConfig, logger: Logger, deadline: Duration) async -> DoctorFinding {
        let url: DatabaseURL
        do {
            url = try config.resolvedDatabaseURL()
        } catch {
            return DoctorFinding(.failed, "database", "database.url: \(short(error))")
        }
        if case .sqlite(let path) = url, path != ":memory:", !FileManager.default.fileExists(atPath: path) {
            let directory = (path as NSString).deletingLastPathComponent
            let parent = directory.isEmpty ? "." : directory
            if FileManager.default.isWritableFile(atPath: parent) || !FileManager.default.fileExists(atPath: parent) {
                return DoctorFinding(.ok, "database", "\(url) does not exist yet; `herald serve` creates it")
            }
            return DoctorFinding(.failed, "database", "\(url) cannot be created: \(parent) is not writable")
        }
        let opened: any Database
        do {
            opened = try await DatabaseFactory.open(url, config: config, logger: logger)
        } catch {
            return DoctorFinding(.failed, "database", "\(url) cannot be opened: \(short(error))")
        }
        let migrator = HeraldSchema.migrator
        do {
            let applied = try await opened.running { () -> Set<MigrationID>? in
                try await withDeadline(deadline) { try await opened.ping() }
                // No migration table yet: a new database.
                return try? await migrator.applied(opened)
            }
            guard let applied else { return DoctorFinding(.ok, "database", "\(url) answers; no Herald schema yet (`herald migrate` or `serve` creates it)") }
            if let unknown = applied.subtracting(migrator.ids).max() {
                return DoctorFinding(.failed, "database", "\(url) has migration \(unknown), which this binary does not know: a newer Herald made it")
            }
            let pending = migrator.ids.filter { !applied.contains($0) }
            if pending.isEmpty { return DoctorFinding(.ok, "database", "\(url) answers; schema up to date (\(applied.count) migrations)") }
            return DoctorFinding(
                .warning, "database",
                "\(url) answers; \(pending.count) migration(s) pending, applied by `herald migrate` or `serve`: \(pending.map(\.description).joined(separator: ", "))"
            )
        } catch is DeadlineExceeded {
            return DoctorFinding(.failed, "database", "\(url) does not answer within \(deadline.components.seconds) s")
        } catch {
            return DoctorFinding(.failed, "database", "\(url) does not answer: \(short(error))")
        }
    }

    static func push(_ push: PushConfig, dryRun: Bool, clock: any HeraldClock) async -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        // The default app first, then the others by id.
        let apps = push.resolvedApps.sorted { ($0.key == PushApps.defaultID ? 0 : 1, $0.key) < ($1.key == PushApps.defaultID ? 0 : 1, $1.key) }
        for (id, app) in apps {
            for provider in [PushProvider.apns, .fcm, .webpush] {
                // One app's one provider at a time, as the default app, so each gets its own line.
                var only = PushConfig()
                only.requestTimeoutMs = push.requestTimeoutMs
                only.apns = provider == .apns ? app.apns : nil
                only.fcm = provider == .fcm ? app.fcm : nil
                only.webpush = provider == .webpush ? app.webpush : nil
                let name = id == PushApps.defaultID ? "push.\(provider.rawValue)" : "push.apps[\(id)].\(provider.rawValue)"
                guard only.apns != nil || only.fcm != nil || only.webpush != nil else {
                    if id == PushApps.defaultID {
                        findings.append(DoctorFinding(.skipped, name, "not configured (pushes for its devices go to the log sender)"))
                    }
                    continue
                }
                let made: (senders: [PushRoute: any PushSender], clients: [any PushClient], vapidPublicKeys: [String: String])
                do {
                    made = try await NotificationModule.providerSenders(only, clock: clock)
                } catch let error as ConfigurationError {
                    findings.append(DoctorFinding(.failed, name, error.problems.map { $0.message }.joined(separator: "; ")))
                    continue
                } catch {
                    findings.append(DoctorFinding(.failed, name, short(error)))
                    continue
                }
                let environment = provider == .apns ? app.apns?.environment ?? .production : nil
                guard let sender = made.senders[PushRoute(provider: provider, app: PushApps.defaultID, environment: environment)] else { continue }
                findings.append(
                    await probe(provider, sender: sender, push: only, vapidPublicKey: made.vapidPublicKeys[PushApps.defaultID], dryRun: dryRun, name: name))
                for client in made.clients { await client.shutdown() }
            }
        }
        return findings
    }

    static func probe(
        _ provider: PushProvider, sender: any PushSender, push: PushConfig, vapidPublicKey: String?, dryRun: Bool, name: String? = nil
    ) async -> DoctorFinding {
        let name = name ?? "push.\(provider.rawValue)"
        let endpoint: String
        switch provider {
        case .apns:
            let apns = push.apns
            endpoint = apns.map { APNsSender.baseURL($0) } ?? APNsSender.productionURL
        case .fcm:
            endpoint = push.fcm?.baseURL ?? "https://fcm.googleapis.com"
        case .webpush:
            // Each browser's subscription names its own push service: nothing central to ask.
            return DoctorFinding(.ok, name, "VAPID key usable (public key \(vapidPublicKey ?? "?")); push services are per subscription, nothing to contact")
        }
        if dryRun { return DoctorFinding(.ok, name, "credentials read and usable; \(endpoint) not contacted (--dry-run)") }
        let message = PushMessage(
            deliveryID: Identifier.make("dlv"), notificationID: "herald-doctor", userID: "herald-doctor", deviceID: "herald-doctor",
            type: "doctor_probe", severity: .info, provider: provider, platform: provider == .apns ? .ios : .android,
            token: provider == .apns ? apnsProbeToken : fcmProbeToken, title: "Herald doctor", body: nil, data: [:], badge: 0)
        let result: PushResult
        do {
            result = try await withDeadline(.milliseconds(push.requestTimeoutMs)) { try await sender.send(message) }
        } catch is DeadlineExceeded {
            return DoctorFinding(.failed, name, "\(endpoint) did not answer within \(push.requestTimeoutMs) ms")
        } catch {
            return DoctorFinding(.failed, name, "\(endpoint): \(short(error))")
        }
        switch result {
        case .tokenGone(let failure):
            return DoctorFinding(.ok, name, "\(endpoint) accepted the credentials (a made-up device token was refused as expected: \(failure))")
        case .accepted:
            return DoctorFinding(.ok, name, "\(endpoint) accepted the credentials (and a push to a made-up device token)")
        case .refused(let failure):
            return DoctorFinding(.failed, name, "\(endpoint) refused: \(failure)\(hint(failure, section: name).map { " — \($0)" } ?? "")")
        case .retryLater(let failure, _):
            return DoctorFinding(.failed, name, "\(endpoint) could not be used now: \(failure)")
        }
    }

    /// What to change for the refusals a wrong setup causes; `section` is the finding's
    /// configuration path (`push.apns`, `push.apps[driver].apns`), so an app's line names its own keys.
    static func hint(_ failure: PushFailure, section: String) -> String? {
        switch failure {
        case .apns(.invalidProviderToken), .apns(.unrelatedKeyIDInToken), .apns(.missingProviderToken):
            "check \(section).team_id, key_id and the .p8 file belong together"
        case .apns(.badEnvironmentKeyIDInToken): "the key is not enabled for \(section).environment"
        case .apns(.topicDisallowed), .apns(.badTopic): "check \(section).topic (the app's bundle id) belongs to the team"
        case .apns(.expiredProviderToken): "check this machine's clock"
        case .fcm(.authConfiguration): "the OAuth token endpoint refused the service account (\(section).service_account_file)"
        case .fcm(.senderIDMismatch), .fcm(.thirdPartyAuthError), .fcm(.unauthenticated):
            "check the service account belongs to the project (\(section).project_id)"
        default: nil
        }
    }

    /// An error's text, one line and short (no stack, no driver dump).
    static func short(_ error: any Error) -> String {
        let text = String(describing: error).split(whereSeparator: \.isNewline).joined(separator: " ")
        return text.count > 300 ? String(text.prefix(300)) + "…" : text
    }
}
