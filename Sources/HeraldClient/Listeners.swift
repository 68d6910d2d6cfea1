import Foundation

/// Hands each value to every stream asked for so far (each with its own buffer), and forgets
/// a stream when its reader stops: the inbox's snapshots and the connection's messages and
/// states, read by any number of views at once.
final class Listeners<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `continuations` is only touched under `lock`.
    private let lock = NSLock()
    private var continuations: [UUID: AsyncStream<Value>.Continuation] = [:]

    /// A new stream; `current` is its first value when given.
    func stream(current: Value? = nil, buffering limit: Int) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(limit))
        let id = UUID()
        lock.lock()
        continuations[id] = continuation
        lock.unlock()
        if let current { continuation.yield(current) }
        continuation.onTermination = { [weak self] _ in
            guard let self else { return }
            self.lock.lock()
            self.continuations[id] = nil
            self.lock.unlock()
        }
        return stream
    }

    func yield(_ value: Value) {
        lock.lock()
        let current = Array(continuations.values)
        lock.unlock()
        for continuation in current { continuation.yield(value) }
    }
}
