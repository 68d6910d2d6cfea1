import HeraldCore
import HeraldServer
import Testing

@Suite struct ConfigValidationTests {
    @Test func defaultsAreValid() {
        #expect(HeraldConfig().validationErrors().isEmpty)
    }

    @Test func namesEveryBadFieldByItsConfigPath() {
        var config = HeraldConfig()
        config.server.port = 70000
        config.limits.maxBodyBytes = 10
        config.auth.jwtSecret = "short"
        config.auth.defaultRole = "admin"
        config.rateLimits.routes["POST /api/v1/jobs"] = RateLimitRule(limit: 0, windowSeconds: 60)
        config.rateLimits.routes["nonsense"] = RateLimitRule(limit: 1, windowSeconds: 1)
        config.appVersions.platforms["ios"] = .init(minimumVersion: "one")
        config.realtime.unauthenticatedMaxPayload = 1000
        config.realtime.partialMessageTimeoutMs = 0
        let fields = Set(config.validationErrors().map(\.field))
        #expect(
            fields == [
                "server.port", "limits.max_body_bytes", "auth.jwt_secret", "auth.default_role",
                "rate_limits.routes.POST /api/v1/jobs", "rate_limits.routes.nonsense",
                "app_versions.platforms.ios.minimum_version", "realtime.unauthenticated_max_payload",
                "realtime.partial_message_timeout_ms",
            ])
    }

    @Test func threadsOutsideTheirRangeAreNamed() {
        var config = HeraldConfig()
        for bad in [0, -1, 257] {
            config.server.threads = bad
            #expect(config.validationErrors().map(\.field) == ["server.threads"])
        }
        config.server.threads = 1
        #expect(config.validationErrors().isEmpty)
    }
}
