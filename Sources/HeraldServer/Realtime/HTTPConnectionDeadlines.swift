import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// The deadlines of a plain HTTP connection after its first request head (that one has its
/// own timer in `RealtimeHTTPChannel.setup`): a request body must keep arriving, and a
/// kept-alive connection must bring its next request head soon after the last response.
///
/// Why: without them a peer that trickles a body (a byte every few seconds), idles on a
/// keep-alive connection or trickles its second head holds a descriptor forever, and a few
/// hundred such sockets made a node refuse everyone. The deadlines follow Apache's
/// `mod_reqtimeout` and nginx's `client_body_timeout` / `keepalive_timeout`:
/// - **body**: from the head, `bodyTimeout` plus one second per `minimumBodyRate` bytes
///   received, so a large upload at a decent rate is never cut and a trickle always is;
/// - **responding**: no deadline, so a Socket.IO long-poll (25 s) or a slow handler is
///   never cut here (the handlers bound their own work);
/// - **idle**: from the end of a response, the next request head must be complete within
///   `idleTimeout` (this bounds both an idle keep-alive and a trickled second head).
///
/// WebSocket connections never get this handler: they leave the HTTP pipeline at their
/// first request and have their own ping deadlines.
final class HTTPConnectionDeadlines: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    struct Limits: Sendable, Equatable {
        var idleTimeout: TimeAmount
        var bodyTimeout: TimeAmount
        /// Bytes a second that extend the body deadline by one second.
        var minimumBodyRate: Int
    }

    /// What the connection waits for.
    enum State: Equatable {
        /// A request's body, since `started`, with `received` bytes so far.
        case readingBody(started: NIODeadline, received: Int)
        /// The response to a request read whole.
        case responding
        /// The next request head, since the last response ended.
        case idle
    }

    private let limits: Limits
    /// Added while the connection's first head is being handed on: it reads that head next.
    private var state: State = .responding
    private var timer: Scheduled<Void>?
    /// When the pending timer fires (nil: none is pending).
    private var timerAt: NIODeadline?
    /// When the current stage must be over (nil: no deadline while responding).
    private var deadline: NIODeadline?

    init(limits: Limits) {
        self.limits = limits
    }

    /// When the connection is cut in `state` (nil: never).
    static func deadline(of state: State, limits: Limits, now: NIODeadline) -> NIODeadline? {
        switch state {
        case .readingBody(let started, let received):
            let rate = max(1, limits.minimumBodyRate)
            return started + limits.bodyTimeout + .nanoseconds(Int64(received / rate) * 1_000_000_000 + Int64(received % rate) * 1_000_000_000 / Int64(rate))
        case .responding:
            return nil
        case .idle:
            return now + limits.idleTimeout
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        timerAt = nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            move(to: .readingBody(started: .now(), received: 0), context: context)
        case .body(let buffer):
            if case .readingBody(let started, let received) = state {
                // Re-armed at most once a second's worth of bytes: a fast upload does not
                // reschedule its timer per read.
                let total = received + buffer.readableBytes
                state = .readingBody(started: started, received: total)
                if total / max(1, limits.minimumBodyRate) != received / max(1, limits.minimumBodyRate) { arm(channel: context.channel) }
            }
        case .end:
            move(to: .responding, context: context)
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            // The response ends once it is written: only then does idleness start.
            let ended = context.eventLoop.makePromise(of: Void.self)
            let handler = NIOLoopBound(self, eventLoop: context.eventLoop)
            let channel = context.channel
            ended.futureResult.whenComplete { _ in
                guard handler.value.state == .responding else { return }
                handler.value.state = .idle
                handler.value.arm(channel: channel)
            }
            promise.map { ended.futureResult.cascade(to: $0) }
            context.write(data, promise: ended)
            return
        }
        context.write(data, promise: promise)
    }

    private func move(to next: State, context: ChannelHandlerContext) {
        state = next
        arm(channel: context.channel)
    }

    /// Sets the stage's deadline; schedules a timer only when none pending fires in time.
    ///
    /// Why lazily: a keep-alive connection serving requests back to back moves through three
    /// stages per request, and scheduling (then cancelling) a timer at each was 4–5 % of a
    /// node's CPU at small-room publish rates (BENCHMARKS.md, issue 43). A timer is scheduled
    /// for at most `shortest` ahead, and every deadline lies at least `shortest` after the
    /// moment it is set, so a pending timer always fires before any later deadline: it then
    /// closes the connection if the current deadline has passed, or looks again later.
    private func arm(channel: any Channel) {
        let now = NIODeadline.now()
        deadline = Self.deadline(of: state, limits: limits, now: now)
        guard let deadline else { return }  // responding: a pending timer finds no deadline
        if let timerAt, timerAt <= deadline { return }
        schedule(at: min(deadline, now + shortest), channel: channel)
    }

    private var shortest: TimeAmount { min(limits.idleTimeout, limits.bodyTimeout) }

    private func schedule(at when: NIODeadline, channel: any Channel) {
        timer?.cancel()
        timerAt = when
        let handler = NIOLoopBound(self, eventLoop: channel.eventLoop)
        timer = channel.eventLoop.scheduleTask(deadline: when) { handler.value.fired(channel: channel) }
    }

    private func fired(channel: any Channel) {
        timer = nil
        timerAt = nil
        guard let deadline else { return }
        let now = NIODeadline.now()
        if deadline <= now {
            channel.close(promise: nil)
        } else {
            schedule(at: min(deadline, now + shortest), channel: channel)
        }
    }
}
