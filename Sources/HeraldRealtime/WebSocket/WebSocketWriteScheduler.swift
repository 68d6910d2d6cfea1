import NIOCore
import Synchronization

/// Drains the WebSockets of one event loop that have something to write, in rounds.
///
/// Why rounds instead of a task per connection: a broadcast to 10,000 sockets would put
/// 10,000 tasks in front of everything else on the loop, including the next publish
/// request, so every event would be written on its own. Here the loop runs one task that
/// writes at most `chunk` connections and then lets I/O in; whatever is published
/// meanwhile joins the queues not yet written, so under load each write carries several
/// events and the number of system calls per delivery falls as the load rises.
final class WebSocketWriteScheduler: Sendable {
    /// Connections written before the loop looks at I/O again (under 1 ms of writes: a
    /// request arriving during a broadcast waits at most that long to be read).
    static let chunk = 64

    private struct State {
        var waiting: [ChannelWebSocketTransport] = []
        var scheduled = false
    }

    let eventLoop: any EventLoop
    private let state = Mutex(State())
    /// The round in progress, and the buffer each drain of the loop encodes into (one
    /// write goes out at a time, so one buffer serves them all): only touched on the loop.
    private let round: NIOLoopBoundBox<(list: [ChannelWebSocketTransport], next: Int)>
    private let buffer: NIOLoopBoundBox<ByteBuffer>
    /// How the loop is let through I/O between two chunks, once it is open (until then, and
    /// where the loop cannot watch a pipe, a timer of `pause`).
    private let wakePipe: NIOLoopBoundBox<NIOLoopBound<LoopWakePipe>?>

    private init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
        round = NIOLoopBoundBox.makeBoxSendingValue(([], 0), eventLoop: eventLoop)
        buffer = NIOLoopBoundBox.makeBoxSendingValue(ByteBuffer(), eventLoop: eventLoop)
        wakePipe = NIOLoopBoundBox.makeBoxSendingValue(nil, eventLoop: eventLoop)
    }

    private func openWakePipe() {
        LoopWakePipe.open(on: eventLoop) { self.run() }.whenSuccess { self.wakePipe.value = $0 }
    }

    private static let schedulers = Mutex<[ObjectIdentifier: WebSocketWriteScheduler]>([:])

    /// The scheduler of `eventLoop` (one per loop, for the life of the process). A new one
    /// opens its wake pipe after the lock is let go (`pipe`, `fcntl` and a registration with
    /// the loop need no lock); until the pipe is there it joins its rounds with the timer.
    static func of(_ eventLoop: any EventLoop) -> WebSocketWriteScheduler {
        let (scheduler, isNew) = schedulers.withLock { schedulers in
            let key = ObjectIdentifier(eventLoop)
            if let existing = schedulers[key] { return (existing, false) }
            let scheduler = WebSocketWriteScheduler(eventLoop: eventLoop)
            schedulers[key] = scheduler
            return (scheduler, true)
        }
        if isNew { scheduler.openWakePipe() }
        return scheduler
    }

    /// `transport` has frames to write (it asks once until it has written them all).
    func needsDrain(_ transport: ChannelWebSocketTransport) {
        let start = state.withLock { state -> Bool in
            state.waiting.append(transport)
            if state.scheduled { return false }
            state.scheduled = true
            return true
        }
        if start { eventLoop.execute { self.run() } }
    }

    private func run() {
        var (list, next) = round.value
        round.value = ([], 0)
        if next >= list.count {
            list = state.withLock { state in
                let taken = state.waiting
                state.waiting = []
                if taken.isEmpty { state.scheduled = false }
                return taken
            }
            next = 0
            if list.isEmpty { return }
        }
        let end = min(list.count, next + Self.chunk)
        var buffer = self.buffer.value
        self.buffer.value = ByteBuffer()
        for index in next..<end { list[index].drainOnLoop(using: &buffer) }
        self.buffer.value = buffer
        if end < list.count { round.value = (list, end) }
        // Not `execute`: NIO runs every immediate task queued during a tick before it looks at
        // I/O again, so an immediate continuation would keep the loop from reading (the next
        // publish among others) until the whole round is written. The pipe's byte is read in
        // the loop's next look at I/O; the timer is the fallback.
        if let wake = wakePipe.value, wake.value.wake() { return }
        eventLoop.scheduleTask(in: Self.pause) { self.run() }
    }

    /// How long the loop may look at I/O between two chunks, where it has no wake pipe.
    static let pause = TimeAmount.microseconds(20)
}
