import AsyncHTTPClient
import Foundation
import HeraldCore
import Logging
import NIOCore
import NIOHTTP1

extension StripeGateway {
    func post(_ path: String, _ form: StripeForm, idempotencyKey: String, operation: String) async throws -> StripePaymentIntent {
        try await send(try postRequest(path, form, idempotencyKey: idempotencyKey), operation: operation, as: StripePaymentIntent.self)
    }

    /// Stripe allows keys of up to 255 characters; control characters would break the header.
    static func checkIdempotencyKey(_ key: String) throws {
        guard !key.isEmpty, key.utf8.count <= 255, key.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw PaymentError(.invalid, "The idempotency key is missing or malformed.")
        }
    }

    func postRequest(_ path: String, _ form: StripeForm, idempotencyKey: String) throws -> HTTPClientRequest {
        try Self.checkIdempotencyKey(idempotencyKey)
        var request = HTTPClientRequest(url: baseURL + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Idempotency-Key", value: idempotencyKey)
        request.body = .bytes(ByteBuffer(string: form.encoded))
        return request
    }

    /// Stripe's answer: the object, or the refusal as the error to throw (`classify`), with
    /// what Stripe said for the callers that look closer (`attach`).
    enum Answer<Object> {
        case object(Object)
        case refused(PaymentError, status: Int, detail: StripeErrorEnvelope.Detail?)
    }

    func send<Object: StripeObject>(_ request: HTTPClientRequest, operation: String, as type: Object.Type) async throws -> Object {
        switch try await answer(request, operation: operation, as: type) {
        case .object(let object): return object
        case .refused(let error, _, _): throw error
        }
    }

    func answer<Object: StripeObject>(_ request: HTTPClientRequest, operation: String, as type: Object.Type) async throws -> Answer<Object> {
        var request = request
        request.headers.add(name: "Authorization", value: "Bearer \(secretKey)")
        request.headers.add(name: "Accept", value: "application/json")
        if let apiVersion { request.headers.add(name: "Stripe-Version", value: apiVersion) }
        var logger = self.logger
        logger[metadataKey: "stripe.operation"] = "\(operation)"

        let (status, headers, body) = try await exchange(request, logger: logger)
        if let requestID = headers.first(name: "request-id") { logger[metadataKey: "stripe.request_id"] = loggable(requestID) }

        if (200..<300).contains(status) {
            guard let object = try? JSONDecoder().decode(Object.self, from: body) else {
                logger.warning(
                    "Stripe answered success with a body that is not the object asked for",
                    metadata: ["stripe.http_status": "\(status)", "stripe.object": "\(Object.objectName)"])
                throw PaymentError(.unavailable, "The payment provider's answer could not be read.")
            }
            logger.debug("Stripe answered", metadata: ["stripe.id": loggable(object.id), "stripe.status": loggable(object.loggedStatus)])
            return .object(object)
        }

        let detail = (try? JSONDecoder().decode(StripeErrorEnvelope.self, from: body))?.error
        let error = classify(status: status, detail: detail)
        let metadata: Logger.Metadata = [
            "stripe.http_status": "\(status)",
            "stripe.error_type": loggable(detail?.type),
            "stripe.error_code": loggable(detail?.code),
            "stripe.decline_code": loggable(detail?.declineCode),
            "stripe.param": loggable(detail?.param),
            "payment.error": "\(error.kind.rawValue)",
        ]
        switch status {
        case 401, 403: logger.error("Stripe refused Herald's credentials; check the configured secret key", metadata: metadata)
        case _ where error.kind == .unavailable: logger.warning("Stripe is unavailable", metadata: metadata)
        default: logger.notice("Stripe refused the request", metadata: metadata)
        }
        return .refused(error, status: status, detail: detail)
    }

    /// Sends `request` and reads its answer, all within `timeout`.
    ///
    /// async-http-client's deadline ends when the response head arrives, so the body read
    /// gets the rest of the same deadline separately: a provider that sends headers and then
    /// stalls must still cost a bounded wait.
    private func exchange(_ request: HTTPClientRequest, logger: Logger) async throws -> (Int, HTTPHeaders, Data) {
        let deadline = NIODeadline.now() + .milliseconds(timeout.wholeMilliseconds)
        do {
            let response = try await client.execute(request, deadline: deadline)
            let remaining = deadline - NIODeadline.now()
            guard remaining.nanoseconds > 0 else { throw DeadlineExceeded() }
            let body = try await withDeadline(.nanoseconds(remaining.nanoseconds)) {
                try await response.body.collect(upTo: Self.maxResponseBytes)
            }
            return (Int(response.status.code), response.headers, Data(buffer: body))
        } catch {
            if Task.isCancelled { throw CancellationError() }
            let message: String
            switch error {
            case let error as HTTPClientError where error == .deadlineExceeded:
                message = "The payment provider did not answer in time."
            case is DeadlineExceeded:
                message = "The payment provider did not answer in time."
            case is NIOTooManyBytesError:
                message = "The payment provider's answer was too large."
            default:
                message = "The payment provider could not be reached."
            }
            logger.warning("Stripe request failed", metadata: ["error": "\(String(describing: error))"])
            throw PaymentError(.unavailable, message)
        }
    }
}
