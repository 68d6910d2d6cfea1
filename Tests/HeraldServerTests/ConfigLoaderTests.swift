import Foundation
import HeraldCore
import HeraldServer
import HeraldStorage
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
        #expect(config.logging.format == "json")
        #expect(throws: ConfigurationError.self) { try ConfigLoader.load(file: nil, environment: ["HERALD_PORT": "http"]) }
    }

    @Test func resolvesTheDatabaseURL() throws {
        var config = HeraldConfig()
        config.dataDir = "/data"
        #expect(try config.resolvedDatabaseURL() == .sqlite(path: "/data/herald.sqlite"))
        config.database.url = "postgres://u:p%40ss@h:6543/db?sslmode=require"
        guard case .postgres(let location) = try config.resolvedDatabaseURL() else { Issue.record("not postgres"); return }
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
