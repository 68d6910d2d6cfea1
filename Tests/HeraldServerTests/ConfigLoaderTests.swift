import Foundation
import HeraldCore
import HeraldDispatch
import HeraldNotifications
import HeraldServer
import HeraldStorage
import HeraldTransit
import HeraldTrips
import Testing

@Suite struct ConfigLoaderTests {
    @Test func readsYAMLWithSnakeCaseKeysAndKeepsDefaultsForTheRest() throws {
        let config = try ConfigLoader.parse(
            """
            server:
              port: 9090
              threads: 3
            database:
              url: postgres://herald@db:5432/herald
              max_connections: 8
            auth:
              issuer: https://auth.example
              role_claim: app_metadata.role
            rate_limits:
              anonymous: { limit: 10, window_seconds: 1 }
              routes:
                "POST /api/v1/ride_requests": { limit: 3, window_seconds: 60 }
            app_versions:
              platforms:
                ios: { minimum_version: "1.2.0", app_store_url: "https://apps.apple.com/x" }
            """, isYAML: true)
        #expect(config.server.port == 9090)
        #expect(config.server.host == "0.0.0.0")
        #expect(config.server.threads == 3)
        #expect(config.database.url == "postgres://herald@db:5432/herald")
        #expect(config.database.maxConnections == 8)
        #expect(config.auth.issuer == "https://auth.example")
        #expect(config.auth.roleClaim == "app_metadata.role")
        #expect(config.rateLimits.anonymous == RateLimitRule(limit: 10, windowSeconds: 1))
        #expect(config.rateLimits.authenticated == RateLimitConfig().authenticated)
        // Route keys are kept verbatim (no snake-case conversion of dictionary keys).
        #expect(config.rateLimits.routes["POST /api/v1/ride_requests"] == RateLimitRule(limit: 3, windowSeconds: 60))
        // A configured route adds to the built-in ones rather than dropping them.
        #expect(config.rateLimits.rule(forRoute: "POST /api/v1/ride_requests") == RateLimitRule(limit: 3, windowSeconds: 60))
        #expect(config.rateLimits.rule(forRoute: "GET /api/v1/stops/nearby") == RateLimitConfig.builtInRoutes["GET /api/v1/stops/nearby"])
        #expect(config.rateLimits.rule(forRoute: "GET /api/v1/me") == nil)
        #expect(config.appVersions.platforms["ios"]?.minimumVersion == "1.2.0")
        #expect(config.limits.maxBodyBytes == 1_048_576)
    }

    @Test func readsJSONAndAnEmptyDocument() throws {
        let config = try ConfigLoader.parse(#"{"data_dir": "/var/lib/herald", "limits": {"max_body_bytes": 4096}}"#, isYAML: false)
        #expect(config.dataDir == "/var/lib/herald")
        #expect(config.limits.maxBodyBytes == 4096)
        #expect(try ConfigLoader.parse("", isYAML: true) == HeraldConfig())
    }

    /// What `scripts/fuzz config` found: Yams's untyped loader force-unwraps mapping keys as
    /// text, so these crashed the server at start. Each is now a named problem.
    @Test(arguments: [
        ("-?\r-", "must be a mapping of sections"),
        ("a:\n  - ? [x]\n    : 1\n", "has a key that is not text"),
        ("? [a, b]\n: 1\n", "has a key that is not text"),
        ("server: &a {x: *a}\n", ""),
        ("- 1\n- 2\n", "must be a mapping of sections"),
        ("a: .inf\n", "no JSON form"),
        ("a: &a [*a, *a]\n", ""),
    ])
    func refusesYAMLWithoutAJSONFormWithANamedProblem(yaml: String, message: String) {
        do {
            _ = try ConfigLoader.parse(yaml, isYAML: true)
            Issue.record("expected \(yaml.debugDescription) to be refused")
        } catch let error as ConfigurationError {
            #expect(error.problems.count == 1 && error.problems[0].field == "config")
            #expect(message.isEmpty || error.problems[0].message.contains(message), "\(error.problems)")
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// An alias bomb (each level doubles the one below) is refused before it is expanded.
    @Test func refusesAnAliasBomb() {
        var yaml = "a0: &a0 [x, x]\n"
        for level in 1..<30 { yaml += "a\(level): &a\(level) [*a\(level - 1), *a\(level - 1)]\n" }
        #expect(throws: ConfigurationError.self) { try ConfigLoader.parse(yaml, isYAML: true) }
    }

    @Test func namesTheFieldOfATypeError() {
        do {
            _ = try ConfigLoader.parse("server:\n  port: eighty\n", isYAML: true)
            Issue.record("expected an error")
        } catch let error as ConfigurationError {
            #expect(error.problems.map(\.field) == ["server.port"])
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    /// Every section states its keys once, as its properties: a key of each module's section,
    /// spelled as docs/configuration.md documents it, reaches its setting, and acronyms are one word.
    @Test func readsAKeyOfEverySection() throws {
        let config = try ConfigLoader.parse(
            """
            realtime: { ping_interval_ms: 1234 }
            notifications: { ack_timeout_ms: 4321, types: { job_offer: { severity: alert } } }
            push:
              batch_size: 7
              apns: { team_id: ABCDE12345, key_id: KEY1234567, private_key_file: /k.p8, topic: app.x, base_url: "https://127.0.0.1:1" }
              fcm: { service_account_file: /sa.json, token_url: "https://t" }
            dispatch: { radius_km: 3.5, pricing: { base_fee_minor: 999 } }
            payments: { stripe: { secret_key: sk_test_x } }
            trips: { surge: { max_multiplier: 2.5 }, ride_types: { PREMIUM: { capacity: 3 } } }
            transit: { feeds: [{ name: city }], alerts: { mute_hours: 12 } }
            idempotency: { ttl_seconds: 60 }
            """, isYAML: true)
        #expect(config.realtime.pingIntervalMs == 1234)
        #expect(config.notifications.ackTimeoutMs == 4321)
        #expect(config.notifications.types["job_offer"]?.severity == .alert)
        #expect(config.notifications.types["job_offer"]?.delivery == NotificationTypeConfig().delivery)
        #expect(config.push.batchSize == 7)
        #expect(config.push.apns?.teamID == "ABCDE12345" && config.push.apns?.baseURL == "https://127.0.0.1:1")
        #expect(config.push.apns?.environment == .production && config.push.apns?.connections == 2)
        #expect(config.push.fcm?.tokenURL == "https://t" && config.push.fcm?.projectID == nil)
        #expect(config.dispatch.radiusKm == 3.5 && config.dispatch.pricing.baseFeeMinor == 999)
        #expect(config.dispatch.pricing.perYardMinor == PricingConfig().perYardMinor)
        #expect(config.payments.stripe.secretKey == "sk_test_x")
        #expect(config.trips.surge.maxMultiplier == 2.5 && config.trips.surge.sensitivity == SurgeConfig().sensitivity)
        #expect(
            config.trips.rideTypes == [
                "PREMIUM": {
                    var rates = RideTypeConfig()
                    rates.capacity = 3
                    return rates
                }()
            ])
        #expect(config.transit.feeds.map(\.name) == ["city"] && config.transit.feeds[0].refreshIntervalSeconds == 86_400)
        #expect(config.transit.alerts.muteHours == 12)
        #expect(config.idempotency.ttlSeconds == 60)
        #expect(config.validationErrors().isEmpty, "\(config.validationErrors())")
        // Written back as JSON (snake_case keys, as Foundation spells them), it loads the same.
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        #expect(try ConfigLoader.parse(String(decoding: encoder.encode(config), as: UTF8.self), isYAML: false) == config)
    }

    /// Credentials and names have no default: left out, validation names each one.
    @Test func namesEachMissingCredential() throws {
        let config = try ConfigLoader.parse("push:\n  apns: { topic: app.x }\ntransit:\n  realtime: [{ feed: x }]\n", isYAML: true)
        let fields = Set(config.validationErrors().map(\.field))
        #expect(
            fields.isSuperset(of: [
                "push.apns.team_id", "push.apns.key_id", "push.apns.private_key_file", "transit.realtime[0].name", "transit.realtime[0].url",
            ]), "\(fields)")
    }

    /// A region: its parts load, and a bad one is named by its path.
    @Test func aRegionsPartsAreReadAndChecked() throws {
        let good = try ConfigLoader.parse(
            "transit:\n  feeds:\n    - name: city\n      parts:\n        - { name: bus, url: 'https://b.example/gtfs.zip', headers: { x-key: k } }\n        - { name: rail, url: 'https://r.example/gtfs.zip' }\n",
            isYAML: true)
        var bus = TransitConfig.FeedPartConfig(name: "bus", url: "https://b.example/gtfs.zip")
        bus.headers = ["x-key": "k"]
        #expect(good.transit.feeds[0].parts == [bus, TransitConfig.FeedPartConfig(name: "rail", url: "https://r.example/gtfs.zip")])
        #expect(good.validationErrors().isEmpty, "\(good.validationErrors())")
        let bad = try ConfigLoader.parse(
            "transit:\n  feeds:\n    - name: city\n      url: 'https://c.example/gtfs.zip'\n      parts:\n        - { name: 'Bus:1', url: 'ftp://b.example/gtfs.zip' }\n        - { name: rail, url: 'https://r.example/a.zip' }\n        - { name: rail, url: 'https://r.example/b.zip' }\n",
            isYAML: true)
        #expect(
            Set(bad.validationErrors().map(\.field)) == [
                "transit.feeds[0].url", "transit.feeds[0].parts[0].name", "transit.feeds[0].parts[0].url", "transit.feeds[0].parts[2].name",
            ], "\(bad.validationErrors())")
    }

    @Test func environmentOverridesTheFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("herald-\(UUID().uuidString).yaml")
        try "server:\n  port: 9090\n  host: 10.0.0.1\n".write(to: url, atomically: true, encoding: .utf8)
        let config = try ConfigLoader.load(
            file: url.path,
            environment: ["HERALD_PORT": "7070", "HERALD_DATABASE_URL": "sqlite:/tmp/x.sqlite", "HERALD_JWT_SECRET": "s", "HERALD_LOG_FORMAT": "json"])
        #expect(config.server.port == 7070)
        #expect(config.server.host == "10.0.0.1")
        #expect(config.database.url == "sqlite:/tmp/x.sqlite")
        #expect(config.auth.jwtSecret == "s")
        #expect(config.logging.format == .json)
        #expect(throws: ConfigurationError.self) { try ConfigLoader.load(file: nil, environment: ["HERALD_PORT": "http"]) }
    }

    /// A setting that takes one of a few words refuses any other while the file is read,
    /// naming the key and the words (the file's text, and what is written back, unchanged).
    @Test func aModeSettingRefusesAWordItDoesNotKnow() throws {
        let settings: [(yaml: String, field: String, words: String)] = [
            ("logging: { format: xml }", "logging.format", "text or json"),
            ("logging: { level: loud }", "logging.level", "trace, debug, info, notice, warning, error or critical"),
            ("payments: { provider: paypal }", "payments.provider", "ledger or stripe"),
            ("push: { apns: { environment: staging } }", "push.apns.environment", "production or sandbox"),
            ("transit: { alerts: { quiet_hours: later } }", "transit.alerts.quiet_hours", "digest or drop"),
            ("notifications: { live_activities: { channel_storage: all } }", "notifications.live_activities.channel_storage", "none or most_recent"),
            ("notifications: { types: { job_offer: { severity: loud } } }", "notifications.types.job_offer.severity", "info, warning or alert"),
            ("notifications: { types: { job_offer: { delivery: sms } } }", "notifications.types.job_offer.delivery", "push or in_app"),
            (
                "notifications: { types: { job_offer: { interruption_level: urgent } } }", "notifications.types.job_offer.interruption_level",
                "passive, active, time-sensitive or critical"
            ),
        ]
        for setting in settings {
            do {
                _ = try ConfigLoader.parse(setting.yaml, isYAML: true)
                Issue.record("\(setting.yaml) was accepted")
            } catch let error as ConfigurationError {
                #expect(error.problems.map(\.field) == [setting.field], "\(error.problems)")
                #expect(error.problems.first?.message.hasSuffix("must be \(setting.words)") == true, "\(error.problems)")
            }
        }
        let config = try ConfigLoader.parse(
            """
            logging: { format: json, level: debug }
            payments: { provider: stripe }
            push: { apns: { environment: sandbox } }
            transit: { alerts: { quiet_hours: drop } }
            notifications: { live_activities: { channel_storage: none } }
            """, isYAML: true)
        #expect(config.logging.format == .json && config.logging.level == .debug && config.payments.provider == .stripe)
        #expect(config.push.apns?.environment == .sandbox && config.transit.alerts.quietHours == .drop)
        #expect(config.notifications.liveActivities.channelStorage == .none)
        let written = String(decoding: try JSONEncoder().encode(config.logging), as: UTF8.self)
        #expect(written.contains(#""format":"json""#) && written.contains(#""level":"debug""#))
        do {
            _ = try ConfigLoader.load(file: nil, environment: ["HERALD_LOG_FORMAT": "xml"])
            Issue.record("HERALD_LOG_FORMAT=xml was accepted")
        } catch let error as ConfigurationError {
            #expect(error.problems == [FieldError(field: "HERALD_LOG_FORMAT", message: "must be text or json")])
        }
    }

    /// Tracing is off until an endpoint is set (in the file or `HERALD_OTLP_ENDPOINT`); a
    /// URL the exporter cannot post to, or one carrying credentials, is refused at start.
    @Test func tracingTakesACollectorURLAndNothingElse() throws {
        #expect(HeraldConfig().tracing.isEnabled == false)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("herald-\(UUID().uuidString).yaml")
        try "tracing:\n  otlp_endpoint: http://collector:4318\n  sample_ratio: 0.25\n".write(to: url, atomically: true, encoding: .utf8)
        let fromFile = try ConfigLoader.load(file: url.path, environment: [:])
        #expect(fromFile.tracing.tracesURL == "http://collector:4318/v1/traces")
        #expect(fromFile.tracing.sampleRatio == 0.25 && fromFile.tracing.serviceName == "herald")
        #expect(fromFile.validationErrors().isEmpty)
        let fromEnvironment = try ConfigLoader.load(file: url.path, environment: ["HERALD_OTLP_ENDPOINT": "https://otel.example.com/"])
        #expect(fromEnvironment.tracing.tracesURL == "https://otel.example.com/v1/traces")

        var config = HeraldConfig()
        for bad in ["collector:4318", "ftp://collector", "http://", "http://user:key@collector:4318", "http://collector:4318?x=1"] {
            config.tracing.otlpEndpoint = bad
            #expect(config.validationErrors().map(\.field) == ["tracing.otlp_endpoint"], "\(bad)")
        }
        config.tracing.otlpEndpoint = "http://localhost:4318"
        config.tracing.sampleRatio = 1.5
        config.tracing.serviceName = ""
        #expect(Set(config.validationErrors().map(\.field)) == ["tracing.sample_ratio", "tracing.service_name"])
    }

    @Test func resolvesTheDatabaseURL() throws {
        var config = HeraldConfig()
        config.dataDir = "/data"
        #expect(try config.resolvedDatabaseURL() == .sqlite(path: "/data/herald.sqlite"))
        config.database.url = "postgres://u:p%40ss@h:6543/db?sslmode=require"
        guard case .postgres(let location) = try config.resolvedDatabaseURL() else {
            Issue.record("not postgres")
            return
        }
        #expect(location.host == "h")
        #expect(location.port == 6543)
        #expect(location.username == "u")
        #expect(location.password == "p@ss")
        #expect(location.database == "db")
        #expect(location.requireTLS)
        #expect(try config.resolvedDatabaseURL().description == "postgres://u@h:6543/db")
        for bad in ["mysql://x/y", "postgres://host", "sqlite:", "nonsense"] {
            config.database.url = bad
            #expect(throws: DatabaseURLError.self) { try config.resolvedDatabaseURL() }
        }
    }
}
