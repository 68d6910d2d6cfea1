import AsyncHTTPClient
import Foundation
import HTTPTypes
import HeraldCore
import HeraldTestSupport
import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// A small Stripe server (PaymentIntents, Customers, PaymentMethods) on 127.0.0.1, for driving
/// `StripeGateway` over a real socket.
///
/// Why a strict fake rather than a recorder: it keeps Stripe's state rules (only an intent
/// awaiting capture can be raised, captured or released; a card used without a customer is
/// spent, a card on one customer is refused for another, `off_session` needs a customer),
/// its idempotency (a key replays the first answer), and it refuses requests Stripe would
/// refuse or Herald must never send (no Bearer key, no form body, a POST without an
/// idempotency key), so a gateway that gets the wire format wrong fails its tests instead of
/// passing against a lenient mock.
struct FakeStripe: Sendable {
    let state: FakeStripeState
    let port: Int

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts a fake, runs `body` against it, and stops the fake.
    static func run<T: Sendable>(
        secretKey: String, apiVersion: String? = "2024-06-20", _ body: (FakeStripe) async throws -> T
    ) async throws -> T {
        let state = FakeStripeState(secretKey: secretKey, apiVersion: apiVersion)
        let (ports, portSink) = AsyncStream<Int>.makeStream()
        let responder = CallbackResponder<BasicRequestContext> { request, _ in
            try await Self.respond(to: request, state: state)
        }
        let app = Application(
            responder: responder,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: "fake-stripe"),
            onServerRunning: { channel in
                portSink.yield(channel.localAddress?.port ?? 0)
                portSink.finish()
            },
            logger: Logger(label: "fake-stripe", factory: { _ in SwiftLogNoOpLogHandler() })
        )
        // Stopped with a graceful shutdown, not by cancelling its task: cancelling a NIO
        // server while a just-accepted connection is still buffered traps in NIOAsyncWriter's
        // deinit (apple/swift-nio#3481), and clients here open connections until the end.
        let services = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [], logger: Logger(label: "fake-stripe", factory: { _ in SwiftLogNoOpLogHandler() }))
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { portSink.finish() }
                try await services.run()
            }
            let result: Result<T, any Error>
            var iterator = ports.makeAsyncIterator()
            if let port = await iterator.next(), port > 0 {
                do { result = .success(try await body(FakeStripe(state: state, port: port))) } catch { result = .failure(error) }
            } else {
                result = .failure(FakeStripeDidNotStart())
            }
            // A request stalled on purpose would hold the shutdown: let every stall go first.
            state.releaseStalls()
            await services.triggerGracefulShutdown()
            // Cancelled only if the shutdown never ends (generous: a loaded machine is slow, and
            // cancelling a server with a connection just accepted can trap, see above).
            group.addTask { try? await CancellableSleep.sleep(for: .seconds(120)) }
            _ = try? await group.next()
            group.cancelAll()
            return try result.get()
        }
    }

    private static func respond(to request: Request, state: FakeStripeState) async throws -> Response {
        var request = request
        let bytes = try await request.collectBody(upTo: 1024 * 1024)
        let headers = Dictionary(
            request.headers.map { ($0.name.canonicalName, $0.value) }, uniquingKeysWith: { first, _ in first })
        let recorded = RecordedRequest(
            method: request.method.rawValue, path: request.uri.path, headers: headers, body: String(buffer: bytes),
            query: request.uri.query ?? "")
        var reply: FakeReply
        switch await state.begin(recorded) {
        case .reply(let answer):
            reply = answer
        case .stall:
            // Held until the test releases its stalls (or the fake stops); the request then
            // completes, as Stripe finishes work whose client has gone.
            await state.released.wait()
            reply = await state.finishStalled(recorded)
        }
        var fields = HTTPFields()
        fields[.contentType] = reply.contentType
        fields[HTTPField.Name("Request-Id")!] = "req_fake"
        if reply.replayed { fields[HTTPField.Name("Idempotent-Replayed")!] = "true" }
        guard reply.bodyStall else {
            return Response(
                status: .init(code: reply.status), headers: fields, body: .init(byteBuffer: ByteBuffer(string: reply.body)))
        }
        // Headers and the first bytes now, the rest after the stall.
        let answer = ByteBuffer(string: reply.body)
        let split = min(8, answer.readableBytes)
        return Response(
            status: .init(code: reply.status), headers: fields,
            body: ResponseBody { writer in
                try await writer.write(answer.getSlice(at: answer.readerIndex, length: split)!)
                await state.released.wait()
                try await writer.write(answer.getSlice(at: answer.readerIndex + split, length: answer.readableBytes - split)!)
                try await writer.finish(nil)
            })
    }

    /// GET `/v1/payment_intents/{id}` over HTTP, as a Stripe client would, parsed.
    func retrieve(_ id: String, secretKey: String) async throws -> (status: Int, json: JSONValue?) {
        var request = HTTPClientRequest(url: "\(baseURL)/v1/payment_intents/\(id)")
        request.method = .GET
        request.headers.add(name: "Authorization", value: "Bearer \(secretKey)")
        if let version = state.apiVersion { request.headers.add(name: "Stripe-Version", value: version) }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(Int64(Patience.seconds)))
        let body = try await response.body.collect(upTo: 1024 * 1024)
        return (Int(response.status.code), try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: body)))
    }
}

extension FakeStripe {
    /// POST `path` with a form body over HTTP, as a Stripe client would, parsed (for testing
    /// the fake's own rules).
    func post(
        _ path: String, _ form: String, secretKey: String, idempotencyKey: String = UUID().uuidString
    ) async throws -> (status: Int, json: JSONValue?) {
        var request = HTTPClientRequest(url: "\(baseURL)\(path)")
        request.method = .POST
        request.headers.add(name: "Authorization", value: "Bearer \(secretKey)")
        if let version = state.apiVersion { request.headers.add(name: "Stripe-Version", value: version) }
        request.headers.add(name: "Content-Type", value: "application/x-www-form-urlencoded")
        request.headers.add(name: "Idempotency-Key", value: idempotencyKey)
        request.body = .bytes(ByteBuffer(string: form))
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(Int64(Patience.seconds)))
        let body = try await response.body.collect(upTo: 1024 * 1024)
        return (Int(response.status.code), try? JSONDecoder().decode(JSONValue.self, from: Data(buffer: body)))
    }
}

struct FakeStripeDidNotStart: Error {}

/// One request as the fake received it.
struct RecordedRequest: Sendable {
    var method: String
    var path: String
    /// Canonical (lower-case) header names.
    var headers: [String: String]
    var body: String
    /// The raw query string (`expand%5B%5D=latest_charge`), empty without one.
    var query: String
    /// The decoded form body, in order; nil if the body was not a valid form.
    var form: [(name: String, value: String)]? = nil

    init(method: String, path: String, headers: [String: String], body: String, query: String = "") {
        self.method = method
        self.path = path
        self.headers = headers.reduce(into: [:]) { $0[$1.key.lowercased()] = $1.value }
        self.body = body
        self.query = query
    }

    /// Whether the query asks to expand `field` (`expand[]=field`, encoded or not).
    func expands(_ field: String) -> Bool {
        (FakeStripeState.decodeForm(query) ?? []).contains { $0.name == "expand[]" && $0.value == field }
    }

    func header(_ name: String) -> String? { headers[name.lowercased()] }

    /// The last value sent for `name` (bracket names as sent: `metadata[job_id]`).
    func field(_ name: String) -> String? { form?.last { $0.name == name }?.value }
    func fields(_ name: String) -> [String] { form?.filter { $0.name == name }.map(\.value) ?? [] }
}

/// An answer: JSON unless a test injected something else.
struct FakeReply: Sendable {
    var status: Int
    var body: String
    var contentType = "application/json"
    var replayed = false
    /// Sends the head and a few bytes, then waits for the test to release the stalls before the rest.
    var bodyStall = false

    static func json(_ status: Int, _ value: JSONValue) -> FakeReply {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return FakeReply(status: status, body: String(decoding: (try? encoder.encode(value)) ?? Data(), as: UTF8.self))
    }

    static func error(
        _ status: Int, type: String, code: String? = nil, declineCode: String? = nil, param: String? = nil,
        message: String, paymentIntent: JSONValue? = nil
    ) -> FakeReply {
        var error: [String: JSONValue] = ["type": .string(type), "message": .string(message)]
        if let code { error["code"] = .string(code) }
        if let declineCode { error["decline_code"] = .string(declineCode) }
        if let param { error["param"] = .string(param) }
        if let paymentIntent { error["payment_intent"] = paymentIntent }
        return json(status, ["error": .object(error)])
    }
}

/// A PaymentIntent as the fake keeps it.
struct FakeIntent: Sendable {
    var id: String
    var status: String
    var amount: Int64
    var amountCapturable: Int64 = 0
    var amountReceived: Int64 = 0
    var currency: String
    var captureMethod: String
    var paymentMethod: String?
    var customer: String?
    var metadata: [String: String]
    /// Requested at creation (`request_incremental_authorization=if_available`).
    var incrementalAuthorization: Bool
    /// Whether the card and merchant allow increments (Stripe decides; the fake by card).
    var incrementable: Bool
    /// Set once the intent was confirmed (a charge exists).
    var chargeID: String?

    /// What Stripe reports on the charge: available only when requested and allowed.
    var incrementalStatus: String { incrementalAuthorization && incrementable ? "available" : "unavailable" }

    var json: JSONValue { json(expandingCharge: false) }

    func json(expandingCharge: Bool) -> JSONValue {
        var charge: JSONValue = .null
        if let chargeID {
            charge =
                expandingCharge
                ? [
                    "id": .string(chargeID), "object": "charge",
                    "payment_method_details": ["type": "card", "card": ["incremental_authorization": ["status": .string(incrementalStatus)]]],
                ]
                : .string(chargeID)
        }
        return [
            "id": .string(id), "object": "payment_intent", "status": .string(status),
            "amount": .number(Double(amount)), "amount_capturable": .number(Double(amountCapturable)),
            "amount_received": .number(Double(amountReceived)), "currency": .string(currency),
            "capture_method": .string(captureMethod), "payment_method": paymentMethod.map(JSONValue.string) ?? .null,
            "customer": customer.map(JSONValue.string) ?? .null,
            "metadata": .object(metadata.mapValues(JSONValue.string)), "latest_charge": charge,
        ]
    }
}

/// A Customer as the fake keeps it.
struct FakeCustomer: Sendable {
    var id: String
    var metadata: [String: String]

    var json: JSONValue {
        ["id": .string(id), "object": "customer", "metadata": .object(metadata.mapValues(JSONValue.string))]
    }
}

/// A PaymentMethod as the fake keeps it. Any `pm_…` id exists (as Stripe's test cards do);
/// the fake remembers only what happened to it.
struct FakePaymentMethod: Sendable {
    var id: String
    /// The customer it is attached to.
    var customer: String?
    /// Confirmed in a PaymentIntent while attached to no customer: Stripe refuses it from then
    /// on, for payments and for attaching.
    var spent = false

    var json: JSONValue {
        ["id": .string(id), "object": "payment_method", "type": "card", "customer": customer.map(JSONValue.string) ?? .null]
    }
}

/// The fake's state and Stripe's rules.
actor FakeStripeState {
    nonisolated let secretKey: String
    nonisolated let apiVersion: String?

    /// Payment methods with scripted outcomes, named after Stripe's test payment methods.
    static let declinedCard = "pm_card_chargeDeclinedInsufficientFunds"
    static let authenticationCard = "pm_card_authenticationRequired"
    /// A card that authorises but whose issuer or network allows no increments (the fake's
    /// own name: Stripe's test cards are all eligible in test mode).
    static let noIncrementCard = "pm_card_visa_noIncrementalAuthorization"

    private(set) var requests: [RecordedRequest] = []
    private(set) var intents: [String: FakeIntent] = [:]
    private(set) var customers: [String: FakeCustomer] = [:]
    /// Only the payment methods something happened to (attached, or spent).
    private(set) var paymentMethods: [String: FakePaymentMethod] = [:]
    /// Wire-format faults the fake saw (it also refused those requests); tests expect none.
    private(set) var violations: [String] = []

    private struct Stored {
        var method: String
        var path: String
        var body: String
        var reply: FakeReply
    }
    private var idempotency: [String: Stored] = [:]
    private var inFlight: Set<String> = []
    private var injected: [FakeReply] = []
    /// Requests to stall (held before processing) and answers to stall (after their headers),
    /// counted down as requests arrive. A stall lasts until `releaseStalls()`, not for a fixed
    /// time: a client's timeout on a loaded machine can fire seconds late, after any fixed stall.
    private var stalls = 0
    private var bodyStalls = 0
    /// Opened by `releaseStalls()`: every stall, current and later, ends.
    nonisolated let released = Gate()
    private var nextID = 1
    /// Increments above this amount are declined by the "issuer".
    private var incrementLimit: Int64?

    init(secretKey: String, apiVersion: String?) {
        self.secretKey = secretKey
        self.apiVersion = apiVersion
    }

    // MARK: Knobs

    /// The next `count` requests get `status` with `body` (JSON unless `contentType` says
    /// otherwise) before any processing, like a load balancer or Stripe's rate limiter.
    func failNext(_ count: Int = 1, status: Int, body: String? = nil, contentType: String = "application/json") {
        let type = status == 429 ? "rate_limit_error" : "api_error"
        let reply =
            body.map { FakeReply(status: status, body: $0, contentType: contentType) }
            ?? .error(status, type: type, code: status == 429 ? "rate_limit" : nil, message: "Injected failure.")
        injected.append(contentsOf: Array(repeating: reply, count: count))
    }

    /// The next request is held until `releaseStalls()`, then processed and answered.
    func stallNextUntilReleased() { stalls += 1 }

    /// The next request is processed at once, but its answer stops after the headers and a
    /// few bytes until `releaseStalls()`.
    func stallBodyOfNextUntilReleased() { bodyStalls += 1 }

    /// Ends every stall, held now or asked for (they pass at once from now on).
    nonisolated func releaseStalls() { released.open() }

    /// Declines incremental authorisations to more than `amount`.
    func declineIncrements(above amount: Int64) { incrementLimit = amount }

    var posts: [RecordedRequest] { requests.filter { $0.method == "POST" } }
    var intentCount: Int { intents.count }
    var stalledInFlight: Int { inFlight.count }
    /// Stalls asked for whose request has not arrived yet.
    var pendingStalls: Int { stalls }

    // MARK: Handling

    enum Begin: Sendable {
        case reply(FakeReply)
        case stall
    }

    func begin(_ incoming: RecordedRequest) -> Begin {
        var request = incoming
        request.form = Self.decodeForm(request.body)
        requests.append(request)

        if !injected.isEmpty { return .reply(injected.removeFirst()) }
        if let refusal = checkWire(request) { return .reply(refusal) }
        if stalls > 0 {
            stalls -= 1
            if let key = request.header("Idempotency-Key") { inFlight.insert(key) }
            return .stall
        }
        var reply = process(request)
        if bodyStalls > 0 {
            bodyStalls -= 1
            reply.bodyStall = true
        }
        return .reply(reply)
    }

    func finishStalled(_ incoming: RecordedRequest) -> FakeReply {
        var request = incoming
        request.form = Self.decodeForm(request.body)
        if let key = request.header("Idempotency-Key") { inFlight.remove(key) }
        return process(request, afterStall: true)
    }

    /// What Stripe refuses outright (or Herald must never send): checked before idempotency,
    /// so such requests are never stored.
    private func checkWire(_ request: RecordedRequest) -> FakeReply? {
        guard request.header("Authorization") == "Bearer \(secretKey)" else {
            // Stripe names the presented key in this message; echoing it whole lets the tests
            // prove the gateway never passes Stripe's text on.
            let presented = request.header("Authorization")?.replacingOccurrences(of: "Bearer ", with: "") ?? ""
            return .error(401, type: "invalid_request_error", message: "Invalid API Key provided: \(presented)")
        }
        if let apiVersion, request.header("Stripe-Version") != apiVersion {
            return violation("Stripe-Version is \(request.header("Stripe-Version") ?? "missing")")
        }
        if request.method == "POST" {
            guard request.header("Content-Type")?.hasPrefix("application/x-www-form-urlencoded") == true else {
                return violation("POST \(request.path) without a form content type")
            }
            guard let key = request.header("Idempotency-Key"), !key.isEmpty else {
                return violation("POST \(request.path) without an Idempotency-Key")
            }
            guard request.form != nil else { return violation("POST \(request.path) with a malformed form body: \(request.body)") }
        } else if !request.body.isEmpty {
            return violation("\(request.method) \(request.path) with a body")
        }
        return nil
    }

    private func violation(_ text: String) -> FakeReply {
        violations.append(text)
        return .error(400, type: "invalid_request_error", code: "fake_wire_violation", message: text)
    }

    /// Idempotency as Stripe keeps it: a key's first completed answer is replayed for the same
    /// request, a different request under the key is refused, a concurrent one conflicts.
    private func process(_ request: RecordedRequest, afterStall: Bool = false) -> FakeReply {
        guard request.method == "POST", let key = request.header("Idempotency-Key") else { return route(request) }
        if let stored = idempotency[key] {
            guard stored.method == request.method, stored.path == request.path, stored.body == request.body else {
                return .error(
                    400, type: "idempotency_error",
                    message: "Keys for idempotent requests can only be used with the same parameters they were first used with.")
            }
            var replay = stored.reply
            replay.replayed = true
            return replay
        }
        if inFlight.contains(key), !afterStall {
            return .error(409, type: "idempotency_error", code: "idempotency_key_in_use", message: "Another request with this key is in progress.")
        }
        let reply = route(request)
        idempotency[key] = Stored(method: request.method, path: request.path, body: request.body, reply: reply)
        return reply
    }

    private func route(_ request: RecordedRequest) -> FakeReply {
        let parts = request.path.split(separator: "/").map(String.init)
        guard parts.count >= 2, parts[0] == "v1" else { return unknownURL(request) }
        switch parts[1] {
        case "payment_intents": return routeIntents(request, parts)
        case "customers":
            switch (request.method, parts.count) {
            case ("POST", 2): return createCustomer(request)
            case ("GET", 3): return customers[parts[2]].map { .json(200, $0.json) } ?? missingCustomer(parts[2])
            default: return unknownURL(request)
            }
        case "payment_methods":
            switch (request.method, parts.count) {
            case ("GET", 3): return paymentMethod(parts[2]).map { .json(200, $0.json) } ?? missingPaymentMethod(parts[2])
            case ("POST", 4) where parts[3] == "attach": return attach(parts[2], request)
            default: return unknownURL(request)
            }
        default: return unknownURL(request)
        }
    }

    private func routeIntents(_ request: RecordedRequest, _ parts: [String]) -> FakeReply {
        switch (request.method, parts.count) {
        case ("POST", 2): return create(request)
        case ("GET", 3): return intents[parts[2]].map { .json(200, $0.json(expandingCharge: request.expands("latest_charge"))) } ?? missing(parts[2])
        case ("POST", 3):
            guard var intent = intents[parts[2]] else { return missing(parts[2]) }
            let reply = update(&intent, request)
            intents[intent.id] = intent
            return reply
        case ("POST", 4):
            guard var intent = intents[parts[2]] else { return missing(parts[2]) }
            let reply: FakeReply
            switch parts[3] {
            case "increment_authorization": reply = increment(&intent, request)
            case "capture": reply = capture(&intent, request)
            case "cancel": reply = cancel(&intent, request)
            default: return unknownURL(request)
            }
            intents[intent.id] = intent
            return reply
        default: return unknownURL(request)
        }
    }

    // MARK: Customers and PaymentMethods

    private func createCustomer(_ request: RecordedRequest) -> FakeReply {
        if let unknown = unknownParameter(request, allowed: ["description", "email", "name"]) { return unknown }
        let customer = FakeCustomer(id: String(format: "cus_fake%06d", nextID), metadata: Self.metadata(request))
        nextID += 1
        customers[customer.id] = customer
        return .json(200, customer.json)
    }

    /// Any `pm_…` id is a card (as Stripe's test cards are); nil for anything else.
    private func paymentMethod(_ id: String) -> FakePaymentMethod? {
        guard id.hasPrefix("pm_") else { return nil }
        return paymentMethods[id] ?? FakePaymentMethod(id: id)
    }

    /// `POST /v1/payment_methods/{id}/attach`. Stripe refuses a card already attached, to this
    /// customer or another, with the same invalid-request error (no code), and a spent card
    /// with the text below; the fake refuses both alike, so the gateway cannot lean on either.
    private func attach(_ id: String, _ request: RecordedRequest) -> FakeReply {
        if let unknown = unknownParameter(request, allowed: ["customer", "expand[]"]) { return unknown }
        guard var method = paymentMethod(id) else { return missingPaymentMethod(id) }
        guard let customer = request.field("customer"), !customer.isEmpty else {
            return .error(400, type: "invalid_request_error", code: "parameter_missing", param: "customer", message: "Missing required param: customer.")
        }
        guard customers[customer] != nil else { return missingCustomer(customer) }
        if method.spent { return Self.spentCard() }
        if method.customer != nil {
            return .error(400, type: "invalid_request_error", message: "The payment method you provided has already been attached to a customer.")
        }
        method.customer = customer
        paymentMethods[id] = method
        return .json(200, method.json)
    }

    /// Stripe's words for a card confirmed once without a customer, or detached since.
    static let spentCardMessage =
        "This PaymentMethod was previously used without being attached to a Customer or was detached from a Customer, and may not be used again."

    private static func spentCard() -> FakeReply {
        .error(400, type: "invalid_request_error", param: "payment_method", message: spentCardMessage)
    }

    private func missingCustomer(_ id: String) -> FakeReply {
        .error(400, type: "invalid_request_error", code: "resource_missing", param: "customer", message: "No such customer: '\(id)'")
    }

    private func missingPaymentMethod(_ id: String) -> FakeReply {
        .error(404, type: "invalid_request_error", code: "resource_missing", param: "payment_method", message: "No such PaymentMethod: '\(id)'")
    }

    private static func metadata(_ request: RecordedRequest) -> [String: String] {
        (request.form ?? []).reduce(into: [String: String]()) { out, field in
            if field.name.hasPrefix("metadata["), field.name.hasSuffix("]") {
                out[String(field.name.dropFirst("metadata[".count).dropLast())] = field.value
            }
        }
    }

    // MARK: PaymentIntents

    /// What Stripe refuses about the customer and the card before it confirms anything: an
    /// unknown customer, `off_session` without a customer (an off-session payment charges a
    /// saved card, which only a customer has), a spent card, and a card attached to a
    /// customer used with another one (or none). The texts are the fake's, after Stripe's.
    private func refusal(customer: String?, paymentMethod: String?, offSession: Bool) -> FakeReply? {
        if let customer, customers[customer] == nil { return missingCustomer(customer) }
        if offSession, customer == nil {
            return .error(
                400, type: "invalid_request_error", code: "parameter_missing", param: "customer",
                message: "A PaymentIntent confirmed off session needs a customer whose saved payment method it charges.")
        }
        guard let paymentMethod, let method = self.paymentMethod(paymentMethod) else { return nil }
        if method.spent { return Self.spentCard() }
        if let owner = method.customer, owner != customer {
            return .error(
                400, type: "invalid_request_error", param: "payment_method",
                message: "The provided PaymentMethod is attached to another Customer than the one given (or none was given).")
        }
        return nil
    }

    /// After a confirmation: a card on no customer is spent, unless the intent saved it for
    /// later (`setup_future_usage` with a customer), which attaches it once it is authorised.
    private func confirmed(_ intent: FakeIntent, savesCard: Bool) {
        // Authorisation looked the card up already: a confirmed intent without one is the fake's bug.
        guard let id = intent.paymentMethod, var method = paymentMethod(id) else { preconditionFailure("a confirmed intent without a known card") }
        // A card saved to a customer stays saved: nothing changes.
        if method.customer != nil { return }
        if savesCard, let customer = intent.customer, ["requires_capture", "succeeded"].contains(intent.status) {
            method.customer = customer
        } else {
            method.spent = true
        }
        paymentMethods[id] = method
    }

    private func create(_ request: RecordedRequest) -> FakeReply {
        if let unknown = unknownParameter(
            request,
            allowed: [
                "amount", "currency", "capture_method", "confirm", "payment_method", "payment_method_types[]",
                "payment_method_options[card][request_incremental_authorization]", "description", "customer", "off_session",
                "setup_future_usage",
            ])
        {
            return unknown
        }
        guard let amount = request.field("amount").flatMap(Int64.init), amount > 0 else {
            return .error(400, type: "invalid_request_error", code: "parameter_invalid_integer", param: "amount", message: "Invalid integer.")
        }
        guard let currency = request.field("currency"), currency.count == 3,
            currency.allSatisfy({ ("a"..."z").contains($0) })
        else {
            return violation("currency must be three lower-case letters, got \(request.field("currency") ?? "nothing")")
        }
        let confirm = request.field("confirm") == "true"
        let offSession = request.field("off_session") == "true"
        if offSession, !confirm {
            // Stripe: off_session is only allowed with confirm=true.
            return .error(400, type: "invalid_request_error", code: "parameter_invalid_empty", param: "off_session", message: "off_session requires confirm.")
        }
        let manual = request.field("capture_method") == "manual"
        let paymentMethod = request.field("payment_method")
        if confirm, paymentMethod == nil {
            return .error(400, type: "invalid_request_error", code: "parameter_missing", param: "payment_method", message: "Missing payment method.")
        }
        if let setup = request.field("setup_future_usage"), !["on_session", "off_session"].contains(setup) {
            return .error(400, type: "invalid_request_error", code: "parameter_invalid_string", param: "setup_future_usage", message: "Invalid value.")
        }
        if let refused = refusal(customer: request.field("customer"), paymentMethod: paymentMethod, offSession: offSession) { return refused }
        let metadata = Self.metadata(request)
        var intent = FakeIntent(
            id: String(format: "pi_fake%06d", nextID), status: "requires_confirmation", amount: amount, currency: currency,
            captureMethod: manual ? "manual" : "automatic", paymentMethod: paymentMethod, customer: request.field("customer"),
            metadata: metadata,
            incrementalAuthorization: request.field("payment_method_options[card][request_incremental_authorization]") == "if_available",
            incrementable: paymentMethod != Self.noIncrementCard)
        nextID += 1
        guard confirm else {
            intents[intent.id] = intent
            return .json(200, intent.json)
        }
        let reply: FakeReply
        switch paymentMethod {
        case Self.declinedCard:
            intent.status = "requires_payment_method"
            reply = .error(
                402, type: "card_error", code: "card_declined", declineCode: "insufficient_funds",
                message: "Your card has insufficient funds.", paymentIntent: intent.json)
        case Self.authenticationCard where offSession:
            // Off session the customer cannot authenticate: Stripe refuses instead of asking.
            intent.status = "requires_payment_method"
            reply = .error(
                402, type: "card_error", code: "authentication_required", declineCode: "authentication_required",
                message: "Your card was declined. This transaction requires authentication.", paymentIntent: intent.json)
        case Self.authenticationCard:
            intent.status = "requires_action"
            reply = .json(200, intent.json)
        default:
            intent.chargeID = String(format: "ch_fake%06d", nextID)
            if manual {
                intent.status = "requires_capture"
                intent.amountCapturable = amount
            } else {
                intent.status = "succeeded"
                intent.amountReceived = amount
            }
            reply = .json(200, intent.json)
        }
        intents[intent.id] = intent
        confirmed(intent, savesCard: request.field("setup_future_usage") != nil)
        return reply
    }

    private func increment(_ intent: inout FakeIntent, _ request: RecordedRequest) -> FakeReply {
        if let unknown = unknownParameter(request, allowed: ["amount", "description"]) { return unknown }
        guard intent.status == "requires_capture" else { return unexpectedState(intent, "increment") }
        // The code is the fake's own: Stripe refuses intents created without the request, and
        // cards or merchants that are not eligible, with an invalid-request error.
        guard intent.incrementalStatus == "available" else {
            return .error(400, type: "invalid_request_error", code: "incremental_authorization_unavailable", message: "Not requested at creation.")
        }
        guard let amount = request.field("amount").flatMap(Int64.init), amount > intent.amount else {
            return .error(400, type: "invalid_request_error", code: "parameter_invalid_integer", param: "amount", message: "Must exceed the current amount.")
        }
        if let incrementLimit, amount > incrementLimit {
            return .error(402, type: "card_error", code: "card_declined", declineCode: "insufficient_funds", message: "Your card has insufficient funds.")
        }
        intent.amount = amount
        intent.amountCapturable = amount
        return .json(200, intent.json)
    }

    /// `POST /v1/payment_intents/{id}`: Herald only ever updates metadata there.
    private func update(_ intent: inout FakeIntent, _ request: RecordedRequest) -> FakeReply {
        if let unknown = unknownParameter(request, allowed: ["description"]) { return unknown }
        for field in request.form ?? [] where field.name.hasPrefix("metadata[") && field.name.hasSuffix("]") {
            intent.metadata[String(field.name.dropFirst("metadata[".count).dropLast())] = field.value
        }
        return .json(200, intent.json)
    }

    private func capture(_ intent: inout FakeIntent, _ request: RecordedRequest) -> FakeReply {
        if let unknown = unknownParameter(request, allowed: ["amount_to_capture"]) { return unknown }
        guard intent.status == "requires_capture" else { return unexpectedState(intent, "capture") }
        let amount: Int64?
        if let raw = request.field("amount_to_capture") { amount = Int64(raw) } else { amount = intent.amountCapturable }
        guard let amount, amount > 0 else {
            return .error(400, type: "invalid_request_error", code: "parameter_invalid_integer", param: "amount_to_capture", message: "Invalid integer.")
        }
        guard amount <= intent.amountCapturable else {
            return .error(400, type: "invalid_request_error", code: "amount_too_large", param: "amount_to_capture", message: "Amount too large.")
        }
        intent.status = "succeeded"
        intent.amountReceived = amount
        intent.amountCapturable = 0
        return .json(200, intent.json)
    }

    private func cancel(_ intent: inout FakeIntent, _ request: RecordedRequest) -> FakeReply {
        if let unknown = unknownParameter(request, allowed: ["cancellation_reason"]) { return unknown }
        guard ["requires_payment_method", "requires_confirmation", "requires_action", "requires_capture"].contains(intent.status) else {
            return unexpectedState(intent, "cancel")
        }
        intent.status = "canceled"
        intent.amountCapturable = 0
        return .json(200, intent.json)
    }

    private func unexpectedState(_ intent: FakeIntent, _ action: String) -> FakeReply {
        .error(
            400, type: "invalid_request_error", code: "payment_intent_unexpected_state",
            message: "You cannot \(action) this PaymentIntent because it has a status of \(intent.status).",
            paymentIntent: intent.json)
    }

    private func missing(_ id: String) -> FakeReply {
        .error(404, type: "invalid_request_error", code: "resource_missing", param: "intent", message: "No such payment_intent: '\(id)'")
    }

    private func unknownURL(_ request: RecordedRequest) -> FakeReply {
        .error(404, type: "invalid_request_error", message: "Unrecognized request URL (\(request.method): \(request.path)).")
    }

    private func unknownParameter(_ request: RecordedRequest, allowed: Set<String>) -> FakeReply? {
        guard let name = (request.form ?? []).map(\.name).first(where: { !allowed.contains($0) && !$0.hasPrefix("metadata[") }) else {
            return nil
        }
        return .error(400, type: "invalid_request_error", code: "parameter_unknown", param: name, message: "Received unknown parameter: \(name)")
    }

    // MARK: Form decoding

    /// Decodes `application/x-www-form-urlencoded`, refusing what a careless encoder leaves
    /// behind: raw spaces, non-ASCII bytes, stray delimiters and broken percent escapes.
    /// Written apart from the gateway's encoder so the two cannot share a mistake.
    static func decodeForm(_ body: String) -> [(name: String, value: String)]? {
        if body.isEmpty { return [] }
        let allowedRaw = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%+[]".utf8)
        var fields: [(name: String, value: String)] = []
        for pair in body.split(separator: "&", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty else { return nil }
            guard parts.allSatisfy({ $0.utf8.allSatisfy(allowedRaw.contains) }),
                let name = unescape(parts[0]), let value = unescape(parts[1])
            else { return nil }
            fields.append((name, value))
        }
        return fields
    }

    private static func unescape(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
