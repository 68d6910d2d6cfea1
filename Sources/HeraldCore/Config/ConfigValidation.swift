import Foundation

extension HeraldConfig {
    /// Problems that would make the server misbehave, named by their config path.
    ///
    /// Why at start-up: a typo in a limit or a port should stop `herald serve` with a clear
    /// message, not surface as odd behaviour under load.
    public func validationErrors() -> [FieldError] {
        var errors: [FieldError] = []
        func check(_ ok: Bool, _ field: String, _ message: String) {
            if !ok { errors.append(FieldError(field: field, message: message)) }
        }
        check((0...65535).contains(server.port), "server.port", "must be between 0 and 65535")
        check(!server.host.isEmpty, "server.host", "must not be empty")
        check(server.requestHeadTimeoutMs >= 100 && server.requestHeadTimeoutMs <= 3_600_000, "server.request_head_timeout_ms", "must be between 100 and 3600000")
        if let limit = server.maxConnections {
            check(limit >= 1 && limit <= 10_000_000, "server.max_connections", "must be between 1 and 10000000")
        }
        if let threads = server.threads {
            check(threads >= 1 && threads <= 256, "server.threads", "must be between 1 and 256")
        }
        check(database.maxConnections >= 1 && database.maxConnections <= 1000, "database.max_connections", "must be between 1 and 1000")
        check(database.acquireTimeoutMs >= 50 && database.acquireTimeoutMs <= 600_000, "database.acquire_timeout_ms", "must be between 50 and 600000")
        check(limits.maxBodyBytes >= 1024 && limits.maxBodyBytes <= 1 << 30, "limits.max_body_bytes", "must be between 1 KiB and 1 GiB")
        check(auth.leewaySeconds >= 0 && auth.leewaySeconds <= 600, "auth.leeway_seconds", "must be between 0 and 600")
        check(!auth.roleClaim.isEmpty, "auth.role_claim", "must not be empty")
        if let secret = auth.jwtSecret {
            check(secret.utf8.count >= 32, "auth.jwt_secret", "must be at least 32 bytes")
        }
        if let role = auth.defaultRole {
            check(["customer", "driver", "operator", "service"].contains(role), "auth.default_role", "must be customer, driver, operator or service")
        }
        for (name, rule) in [("anonymous", rateLimits.anonymous), ("authenticated", rateLimits.authenticated)] {
            check(rule.limit > 0 && rule.windowSeconds > 0, "rate_limits.\(name)", "limit and window_seconds must be positive")
        }
        for (route, rule) in rateLimits.routes.sorted(by: { $0.key < $1.key }) {
            check(rule.limit > 0 && rule.windowSeconds > 0, "rate_limits.routes.\(route)", "limit and window_seconds must be positive")
            if let authenticated = rule.authenticated {
                check(authenticated.limit > 0 && authenticated.windowSeconds > 0, "rate_limits.routes.\(route).authenticated", "limit and window_seconds must be positive")
            }
            let parts = route.split(separator: " ")
            check(parts.count == 2 && parts[1].hasPrefix("/"), "rate_limits.routes.\(route)", "keys look like \"POST /api/v1/path\"")
        }
        for (platform, minimum) in appVersions.platforms.sorted(by: { $0.key < $1.key }) {
            check(SemanticVersion(minimum.minimumVersion) != nil, "app_versions.platforms.\(platform).minimum_version", "must be a dotted version like 1.2.0")
        }
        check(idempotency.ttlSeconds >= 60, "idempotency.ttl_seconds", "must be at least 60")
        check(idempotency.waitSeconds >= 0 && idempotency.waitSeconds <= 120, "idempotency.wait_seconds", "must be between 0 and 120")
        check(idempotency.lockTimeoutSeconds >= 1, "idempotency.lock_timeout_seconds", "must be positive")
        check(["trace", "debug", "info", "notice", "warning", "error", "critical"].contains(logging.level), "logging.level", "unknown level")
        check(["text", "json"].contains(logging.format), "logging.format", "must be text or json")
        check((10...3_600_000).contains(realtime.pingIntervalMs), "realtime.ping_interval_ms", "must be between 10 and 3600000")
        check((10...3_600_000).contains(realtime.pingTimeoutMs), "realtime.ping_timeout_ms", "must be between 10 and 3600000")
        check((1024...100_000_000).contains(realtime.maxPayload), "realtime.max_payload", "must be between 1 KiB and 100 MB")
        // Above max_payload it is harmless: the smaller of the two applies.
        check(realtime.unauthenticatedMaxPayload >= 1024, "realtime.unauthenticated_max_payload", "must be at least 1 KiB")
        check((100...600_000).contains(realtime.partialMessageTimeoutMs), "realtime.partial_message_timeout_ms", "must be between 100 and 600000")
        check(realtime.outboundLimitBytes >= 1024, "realtime.outbound_limit_bytes", "must be at least 1 KiB")
        check(realtime.connectTimeoutMs >= 10, "realtime.connect_timeout_ms", "must be at least 10")
        check(realtime.recoveryWindowSeconds >= 0, "realtime.recovery_window_seconds", "must not be negative")
        check(realtime.historyRetentionSeconds >= realtime.recoveryWindowSeconds, "realtime.history_retention_seconds", "must be at least the recovery window")
        check(realtime.historyMaxPerRoom >= 1, "realtime.history_max_per_room", "must be positive")
        check(realtime.clientMessagesPerSecond >= 1, "realtime.client_messages_per_second", "must be positive")
        for namespace in realtime.namespaces {
            check(namespace.hasPrefix("/") && namespace.count <= 100 && !namespace.contains(","), "realtime.namespaces", "\(namespace) must start with / and contain no comma")
        }
        validateNotifications(check)
        errors += dispatch.validationErrors()
        errors += payments.validationErrors()
        errors += trips.validationErrors()
        errors += transit.validationErrors()
        return errors
    }

    private func validateNotifications(_ check: (Bool, String, String) -> Void) {
        let n = notifications
        check((50...600_000).contains(n.ackTimeoutMs), "notifications.ack_timeout_ms", "must be between 50 and 600000")
        check(n.dedupeCooldownSeconds >= 0, "notifications.dedupe_cooldown_seconds", "must not be negative")
        check((1...100_000).contains(n.maxRecipients), "notifications.max_recipients", "must be between 1 and 100000")
        check((1...1000).contains(n.syncLimit), "notifications.sync_limit", "must be between 1 and 1000")
        for (name, type) in n.types.sorted(by: { $0.key < $1.key }) {
            let path = "notifications.types.\(name)"
            check(NotificationTypeConfig.isValidName(name), path, "a type name is 1 to 64 characters of a-z, 0-9 and _")
            check(["info", "warning", "alert"].contains(type.severity), path + ".severity", "must be info, warning or alert")
            check(["push", "in_app"].contains(type.delivery), path + ".delivery", "must be push or in_app")
            if let level = type.interruptionLevel {
                check(NotificationTypeConfig.interruptionLevels.contains(level), path + ".interruption_level", "must be passive, active, time-sensitive or critical")
            }
            if let category = type.category {
                check((1...64).contains(category.utf8.count), path + ".category", "must be 1 to 64 bytes")
            }
            if let cooldown = type.dedupeCooldownSeconds {
                check(cooldown >= 0, path + ".dedupe_cooldown_seconds", "must not be negative")
            }
        }
        let p = push
        check((1...10_000).contains(p.concurrency), "push.concurrency", "must be between 1 and 10000")
        check((1...10_000).contains(p.batchSize), "push.batch_size", "must be between 1 and 10000")
        check((10...60_000).contains(p.pollIntervalMs), "push.poll_interval_ms", "must be between 10 and 60000")
        check(p.leaseSeconds >= 1, "push.lease_seconds", "must be positive")
        check((100...300_000).contains(p.requestTimeoutMs), "push.request_timeout_ms", "must be between 100 and 300000")
        check(p.maxAttempts >= 1, "push.max_attempts", "must be positive")
        check(p.maxAgeSeconds >= 1, "push.max_age_seconds", "must be positive")
        check(p.retryBaseMs >= 1 && p.retryMaxMs >= p.retryBaseMs, "push.retry_base_ms", "must be positive and at most retry_max_ms")
        check(p.leaseSeconds * 1000 > p.requestTimeoutMs, "push.lease_seconds", "must be longer than push.request_timeout_ms")
        if let apns = p.apns {
            let isID = { (text: String) in text.count == 10 && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
            check(isID(apns.teamID), "push.apns.team_id", "must be the 10-character Team ID")
            check(isID(apns.keyID), "push.apns.key_id", "must be the 10-character Key ID of the .p8 key")
            check(!apns.privateKeyFile.isEmpty, "push.apns.private_key_file", "must name the .p8 file")
            check(!apns.topic.isEmpty && !apns.topic.contains(" "), "push.apns.topic", "must be the app's bundle id")
            check(["production", "sandbox"].contains(apns.environment), "push.apns.environment", "must be production or sandbox")
            check((1...64).contains(apns.connections), "push.apns.connections", "must be between 1 and 64")
            if let url = apns.baseURL { check(url.hasPrefix("https://"), "push.apns.base_url", "must be an https URL") }
        }
        if let fcm = p.fcm {
            check(!fcm.serviceAccountFile.isEmpty, "push.fcm.service_account_file", "must name the service-account JSON file")
        }
        if let webpush = p.webpush {
            check((webpush.vapidPrivateKey == nil) != (webpush.vapidPrivateKeyFile == nil), "push.webpush.vapid_private_key",
                  "give exactly one of vapid_private_key and vapid_private_key_file")
            check(webpush.subject.hasPrefix("mailto:") || webpush.subject.hasPrefix("https://"), "push.webpush.subject",
                  "must be a mailto: or https: URI")
        }
    }
}

extension NotificationTypeConfig {
    public static let interruptionLevels: Set<String> = ["passive", "active", "time-sensitive", "critical"]

    public static func isValidName(_ name: String) -> Bool {
        (1...64).contains(name.utf8.count)
            && name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }
}
