import Foundation
import HeraldCore
import HeraldPush
import HeraldStorage
import Logging
import SQLKit
import ServiceLifecycle
import Synchronization

extension DeliveryWorker {
    /// How one attempt ended, to be written with others in one transaction.
    struct Outcome: Sendable {
        var deliveryID: String
        /// The delivery's new status (`pending` again for a retry).
        var status: DeliveryStatus
        var providerMessageID: String?
        var reason: String?
        var latency: Int?
        var retryAt: Int64?
        /// The device to deactivate (the provider said the token is gone).
        var deactivateDevice: String?
        /// The notification that reached a device by push.
        var sentNotification: String?
        /// The notification's type and the device's provider, for `/metrics` (nil: unknown).
        var type: String?
        var provider: String?

        /// The statistics label: `sent`, `retry` (pending again), `failed`, `dead`, `skipped`.
        var counted: String { status == .pending ? "retry" : status.rawValue }
    }

    func attempt(_ delivery: DeliveryRecord, _ prepared: Prepared) async -> Outcome {
        switch prepared {
        case .skip(let reason, let type):
            var outcome = Outcome(deliveryID: delivery.id, status: .skipped, reason: reason)
            outcome.type = type
            return outcome
        case .send(let message, let createdAt):
            return await send(message, delivery: delivery, createdAt: createdAt)
        }
    }

    /// One attempt, in a span continuing the sender's trace (its notification's
    /// `traceparent`): an operator looking for a missing push finds each attempt, its outcome
    /// and the provider's answer under the request that sent it.
    func send(_ message: PushMessage, delivery: DeliveryRecord, createdAt: Int64) async -> Outcome {
        await HeraldTracing.withSpan(
            "deliver push", continuing: message.traceParent, ofKind: .consumer,
            attributes: [
                "herald.delivery.id": delivery.id, "herald.notification.id": message.notificationID,
                "herald.push.provider": message.provider.rawValue,
            ]
        ) { span in
            span?.set("herald.delivery.attempt", delivery.attempts)
            var outcome = await sendUnlabelled(message, delivery: delivery, createdAt: createdAt)
            outcome.type = message.type
            outcome.provider = message.provider.rawValue
            span?.set("herald.delivery.status", outcome.status.rawValue)
            span?.set("herald.delivery.reason", outcome.reason)
            if outcome.status == .dead || outcome.status == .failed { span?.fail(outcome.reason ?? outcome.status.rawValue) }
            return outcome
        }
    }

    private func sendUnlabelled(_ message: PushMessage, delivery: DeliveryRecord, createdAt: Int64) async -> Outcome {
        guard let sender = senders.sender(for: message) else {
            return Outcome(deliveryID: delivery.id, status: .dead, reason: "no_sender_for_provider")
        }
        let started = ContinuousClock.now
        let result: PushResult
        do {
            // Senders enforce `requestTimeout` themselves (APNs per stream, the others through
            // async-http-client's deadline); this bound, a little later, is for one that does
            // not (a stuck token refresh, a sender of a future provider).
            let bound = settings.requestTimeout + .seconds(1)
            result = try await HeraldTracing.withSpan(
                "send push", continuing: nil, ofKind: .client, attributes: ["herald.push.provider": message.provider.rawValue]
            ) { span in
                let result = try await withDeadline(bound) { try await sender.send(message) }
                span?.record(result)
                return result
            }
        } catch is DeadlineExceeded {
            result = .retryLater(.transport(.timeout), after: nil)
        } catch {
            result = .retryLater(.transport(.sendError), after: nil)
        }
        let latency = Int((ContinuousClock.now - started).wholeMilliseconds)
        switch result {
        case .accepted(let id):
            return Outcome(
                deliveryID: delivery.id, status: .sent, providerMessageID: id, latency: latency, sentNotification: message.notificationID)
        case .retryLater(let failure, let after):
            let reason = failure.description
            let now = clock.now().epochMilliseconds
            let delay = settings.retry.delay(
                afterAttempt: delivery.attempts, retryAfterMilliseconds: after.map(\.wholeMilliseconds), jitter: Double.random(in: 0..<1))
            if settings.retry.mayRetry(attempts: delivery.attempts, createdAt: createdAt, retryAt: now + delay) {
                return Outcome(deliveryID: delivery.id, status: .pending, reason: reason, latency: latency, retryAt: now + delay)
            }
            return Outcome(deliveryID: delivery.id, status: .dead, reason: "gave_up: \(reason)", latency: latency)
        case .tokenGone(let failure):
            return Outcome(
                deliveryID: delivery.id, status: .failed, reason: failure.description, latency: latency, deactivateDevice: message.deviceID)
        case .refused(let failure):
            return Outcome(deliveryID: delivery.id, status: .dead, reason: failure.description, latency: latency)
        }
    }

    /// Writes `batch` in one transaction. A failure is logged and the rows stay `sending`
    /// until their lease ends, when they are tried again (the same `apns-id` and collapse id,
    /// so a device shows a resent push in place of the first).
    static func record(_ batch: [Outcome], database: any Database, clock: any HeraldClock, logger: Logger, statistics: PushStatistics) async {
        guard !batch.isEmpty else { return }
        let now = clock.now().epochMilliseconds
        do {
            try await database.transaction { db in
                for outcome in batch {
                    if let device = outcome.deactivateDevice {
                        try await DeviceStore().deactivate(db, id: device, reason: outcome.reason ?? "token_gone", now: now)
                    }
                }
                try await DeliveryStore().finishAttempts(
                    db,
                    batch.map {
                        DeliveryStore.AttemptEnd(
                            id: $0.deliveryID, status: $0.status, providerMessageID: $0.providerMessageID, reason: $0.reason,
                            latencyMs: $0.latency, retryAt: $0.retryAt)
                    }, now: now)
                let sent = batch.compactMap(\.sentNotification)
                if !sent.isEmpty { try await NotificationStore().markSentViaPushIfUnset(db, ids: sent) }
            }
        } catch {
            logger.error(
                "push outcomes failed to record", metadata: ["deliveries": "\(batch.count)", "error": "\(String(reflecting: error))"])
            return
        }
        for outcome in batch {
            statistics.record(outcome: outcome.counted, reason: outcome.reason, latencyMs: outcome.latency, type: outcome.type, provider: outcome.provider)
        }
    }
}

extension HeraldTracing.Span {
    /// The provider's answer on its send's span: what it said, the id it gave, why it refused.
    func record(_ result: PushResult) {
        switch result {
        case .accepted(let id):
            set("herald.push.result", "accepted")
            set("herald.push.provider_message_id", id)
        case .retryLater(let failure, _):
            set("herald.push.result", "retry_later")
            fail(failure.description)
        case .tokenGone(let failure):
            set("herald.push.result", "token_gone")
            fail(failure.description)
        case .refused(let failure):
            set("herald.push.result", "refused")
            fail(failure.description)
        }
    }
}
