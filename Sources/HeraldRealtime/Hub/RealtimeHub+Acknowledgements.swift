import HeraldCore

/// Acknowledgements: each goes to the one owner of its token's kind.
///
/// Why by kind: a notification's delivery ack is recorded by the notifications module on the
/// node that received it, while a publisher waiting for an ack may wait on any node; the
/// token's kind says which, so a delivery ack is never sent round the cluster and no module
/// reads another's ids.
extension RealtimeHub {
    /// Publishes and waits until some client in `room` (on any node) acknowledges the event,
    /// or `timeout` passes: true when acknowledged. The event is delivered either way.
    public func publish(
        _ name: String, payload: JSONValue, to room: String, persist: Bool = true, ackTimeout timeout: Duration
    ) async throws -> Bool {
        let token = AckToken(.publisher, id: Identifier.make("ack", length: 16))
        return try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    self.ackWaiters.withLock { $0[token.id] = continuation }
                }
            }
            group.addTask {
                try? await CancellableSleep.sleep(for: timeout)
                self.resolveAckWaiter(token.id, acknowledged: false)
                return false
            }
            do {
                try await publish(name, payload: payload, to: room, persist: persist, ackToken: token)
            } catch {
                resolveAckWaiter(token.id, acknowledged: false)
                group.cancelAll()
                throw error
            }
            var acknowledged = false
            for try await result in group {
                if result { acknowledged = true }
                group.cancelAll()
                break
            }
            resolveAckWaiter(token.id, acknowledged: false)
            return acknowledged
        }
    }

    /// Makes `observer(id)` the owner of `kind`'s acknowledgements on this node: it runs for
    /// every client acknowledgement of an event published with such a token, on the node that
    /// received the ack (a domain module records it durably). Composition roots register.
    public func onAcknowledge(_ kind: AckToken.Kind, _ observer: @escaping @Sendable (_ id: String) async -> Void) {
        ackObservers.withLock { $0[kind] = observer }
    }

    /// A client acknowledged `token`: its kind's owner records it; a waiting publisher is
    /// resumed, here or (through the bus) on its node.
    public func acknowledge(_ token: AckToken) async {
        counters.add(.acksReceived)
        if token.kind == .publisher {
            guard !resolveAckWaiter(token.id) else { return }
            do {
                try await bus.forwardAck(token.id)
            } catch {
                logger.warning("forwarding an ack failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        } else if let observer = ackObservers.withLock({ $0[token.kind] }) {
            await observer(token.id)
        } else {
            logger.warning("an acknowledgement no module records", metadata: ["kind": "\(token.kind)"])
        }
    }

    /// Resumes the publisher waiting for the ack `id`, if it waits on this node.
    @discardableResult
    public func resolveAckWaiter(_ id: String, acknowledged: Bool = true) -> Bool {
        guard let waiter = ackWaiters.withLock({ $0.removeValue(forKey: id) }) else { return false }
        waiter.resume(returning: acknowledged)
        return true
    }
}
