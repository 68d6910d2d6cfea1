import NIOCore
import Synchronization

/// A frame on its way to one client.
public enum OutboundFrame: Sendable, Equatable {
    case text(String)
    case binary([UInt8])

    public var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .binary(let bytes): bytes.count
        }
    }
}

/// Whatever writes a queue's frames to the network as they come (an event-loop WebSocket
/// transport). Told when there is something to take, at most once until it has taken all.
public protocol OutboundQueueConsumer: AnyObject, Sendable {
    /// Frames were queued, or the queue closed. Must not block: the transport schedules its
    /// drain on its own event loop.
    func outboundQueueHasWork()
}

/// What a consumer's take leaves behind.
public struct OutboundTake: Sendable, Equatable {
    /// Frames handed over.
    public var taken: Int
    /// Frames are still queued (the take stopped at its byte bound): take again.
    public var more: Bool
    /// The queue is closed and now empty: the transport ends the connection.
    public var finished: OutboundQueue.CloseReason?
}

/// A connection's outbound queue, bounded in bytes.
///
/// Why bounded and non-blocking: a broadcast enqueues to every member and moves on; a client
/// that reads too slowly fills only its own queue, and once it holds more than the limit the
/// connection is closed with a reason instead of slowing anyone else down.
public final class OutboundQueue: Sendable {
    public enum CloseReason: Sendable, Equatable {
        case slowConsumer
        case closed
    }

    private struct State {
        /// Small at first: most connections hold nothing most of the time (NIO's default is 16).
        var frames = CircularBuffer<OutboundFrame>(initialCapacity: 4)
        var bytes = 0
        var waiter: CheckedContinuation<OutboundFrame?, Never>?
        var readableWaiter: CheckedContinuation<Void, Never>?
        var closed: CloseReason?
        var consumer: (any OutboundQueueConsumer)?
        /// The consumer was told and has not yet emptied the queue since.
        var consumerNotified = false

        /// The consumer to tell now (once per emptying).
        mutating func consumerToNotify() -> (any OutboundQueueConsumer)? {
            guard let consumer, !consumerNotified else { return nil }
            consumerNotified = true
            return consumer
        }

        /// Removes queued frames, at least one and otherwise up to `maxBytes`, handing each to
        /// `each`; answers how many it took.
        mutating func take(maxBytes: Int, _ each: (OutboundFrame) -> Void) -> Int {
            var taken = 0
            var size = 0
            while let frame = frames.first, taken == 0 || size + frame.byteCount <= maxBytes {
                frames.removeFirst()
                size += frame.byteCount
                taken += 1
                each(frame)
            }
            bytes -= size
            return taken
        }

        mutating func take(maxBytes: Int) -> [OutboundFrame] {
            var taken: [OutboundFrame] = []
            _ = take(maxBytes: maxBytes) { taken.append($0) }
            return taken
        }
    }

    private let state = Mutex(State())
    public let limitBytes: Int

    public init(limitBytes: Int) {
        self.limitBytes = limitBytes
    }

    /// Queues `frame`; false when the queue is closed or this frame overflowed it (the queue
    /// is then closed with `.slowConsumer`).
    @discardableResult
    public func enqueue(_ frame: OutboundFrame) -> Bool {
        var consumer: (any OutboundQueueConsumer)?
        let (accepted, resume, readable, dropped):
            (Bool, (CheckedContinuation<OutboundFrame?, Never>, OutboundFrame?)?, CheckedContinuation<Void, Never>?, CheckedContinuation<Void, Never>?) =
                state.withLock { state in
                    guard state.closed == nil else { return (false, nil, nil, nil) }
                    if let waiter = state.waiter {
                        state.waiter = nil
                        return (true, (waiter, frame), nil, nil)
                    }
                    let size = frame.byteCount
                    if state.bytes + size > limitBytes {
                        state.closed = .slowConsumer
                        state.frames.removeAll()
                        state.bytes = 0
                        let readable = state.readableWaiter
                        state.readableWaiter = nil
                        // Told even when it was told before and has not drained yet: a consumer
                        // that cannot write (a peer that stopped reading) must still learn
                        // that the queue is over, and cut the connection.
                        state.consumerNotified = true
                        consumer = state.consumer
                        return (false, nil, nil, readable)
                    }
                    state.frames.append(frame)
                    state.bytes += size
                    let readable = state.readableWaiter
                    state.readableWaiter = nil
                    consumer = state.consumerToNotify()
                    return (true, nil, readable, nil)
                }
        if let (waiter, frame) = resume { waiter.resume(returning: frame) }
        readable?.resume()
        dropped?.resume()
        consumer?.outboundQueueHasWork()
        return accepted
    }

    /// Waits until a frame is queued or the queue closes, without taking anything.
    ///
    /// Why: a long-polling GET that the client abandons must not take frames with it; it
    /// waits here, then `drain`s what it can actually send.
    public func waitUntilReadable() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Bool in
                if !state.frames.isEmpty || state.closed != nil { return true }
                state.readableWaiter?.resume()
                state.readableWaiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// The next frame, waiting for one; nil once the queue is closed (queued frames of a
    /// normal close are still handed out first).
    public func next() async -> OutboundFrame? {
        if let ready = takeIfReady() { return ready.frame }
        return await withCheckedContinuation { continuation in
            let immediate: OutboundFrame?? = state.withLock { state in
                if let frame = state.frames.popFirst() {
                    state.bytes -= frame.byteCount
                    return .some(frame)
                }
                if state.closed != nil { return .some(nil) }
                state.waiter = continuation
                return nil
            }
            if let immediate { continuation.resume(returning: immediate) }
        }
    }

    /// Takes every queued frame at once without waiting (for long-polling responses).
    public func drain(maxBytes: Int = .max) -> [OutboundFrame] {
        state.withLock { $0.take(maxBytes: maxBytes) }
    }

    /// Wakes a reader waiting in `waitUntilReadable` even though nothing was queued.
    public func wakeReaders() {
        let readable = state.withLock { state in
            defer { state.readableWaiter = nil }
            return state.readableWaiter
        }
        readable?.resume()
    }

    /// Removes queued frames that match `predicate`.
    public func removeAll(where predicate: (OutboundFrame) -> Bool) {
        state.withLock { state in
            var kept = CircularBuffer<OutboundFrame>()
            var bytes = 0
            for frame in state.frames where !predicate(frame) {
                kept.append(frame)
                bytes += frame.byteCount
            }
            state.frames = kept
            state.bytes = bytes
        }
    }

    /// Closes the queue; a waiting reader gets nil.
    public func close(_ reason: CloseReason = .closed) {
        let (waiter, readable, consumer) = state.withLock { state in
            if state.closed == nil { state.closed = reason }
            let waiter = state.waiter
            let readable = state.readableWaiter
            state.waiter = nil
            state.readableWaiter = nil
            return (waiter, readable, state.consumerToNotify())
        }
        waiter?.resume(returning: nil)
        readable?.resume()
        consumer?.outboundQueueHasWork()
    }

    // MARK: Consumer (event-loop transports)

    /// Hands the queue to `consumer`, which is told whenever there is something to take
    /// (at once, if frames are already waiting or the queue is closed).
    ///
    /// Why push instead of a task waiting in `next()`: a WebSocket served on its event loop
    /// costs no suspended task, and everything queued between two drains goes out in one
    /// write.
    public func attach(_ consumer: any OutboundQueueConsumer) {
        let notify = state.withLock { state -> Bool in
            state.consumer = consumer
            state.consumerNotified = false
            guard !state.frames.isEmpty || state.closed != nil else { return false }
            state.consumerNotified = true
            return true
        }
        if notify { consumer.outboundQueueHasWork() }
    }

    /// Forgets the consumer (its connection is gone).
    public func detach() {
        state.withLock { state in
            state.consumer = nil
            state.consumerNotified = false
        }
    }

    /// Takes queued frames for the consumer, at least one and otherwise up to `maxBytes`,
    /// handing each to `write` under the queue's lock. When the queue is left empty the
    /// consumer is told again about the next frame.
    ///
    /// Why a closure and not an array: a broadcast's drain encodes its one frame into a buffer
    /// its event loop reuses, so a delivery allocates nothing.
    public func takeBatch(maxBytes: Int, _ write: (OutboundFrame) -> Void) -> OutboundTake {
        state.withLock { state in
            let taken = state.take(maxBytes: maxBytes, write)
            let more = !state.frames.isEmpty
            if !more { state.consumerNotified = false }
            return OutboundTake(taken: taken, more: more, finished: more ? nil : state.closed)
        }
    }

    public var closeReason: CloseReason? { state.withLock { $0.closed } }
    public var queuedBytes: Int { state.withLock { $0.bytes } }
    public var isEmpty: Bool { state.withLock { $0.frames.isEmpty } }

    private func takeIfReady() -> (frame: OutboundFrame?, Void)? {
        state.withLock { state in
            if let frame = state.frames.popFirst() {
                state.bytes -= frame.byteCount
                return (frame, ())
            }
            if state.closed != nil { return (nil, ()) }
            return nil
        }
    }
}
