// The framework's floor for one fan-out: what a SwiftNIO server that does nothing but
// `writeAndFlush` one shared buffer to every connection costs, read against the kernel's
// floor (`Benchmarks/KernelFloor/floor.c`, `write(2)` only) and Herald in the same run.
//
//   NIOFloor READER CONNECTIONS ROUNDS READER_CPU [CHUNK PAUSE_US]
//
// READER is `floor.c`'s binary: started here in its reader mode, it connects CONNECTIONS
// loopback sockets to this server, reads every message with epoll and prints the JSON
// line. Run this process pinned (`taskset -c 0`), one event loop. ROUNDS times, one second
// apart, the loop writes one 128-byte message (its first 8 bytes the round's start on
// CLOCK_MONOTONIC, as the C floor writes it) to every connection.
//
// Without CHUNK the loop writes all connections in one go: NIO's own cost per write. With
// CHUNK and PAUSE_US it writes CHUNK connections, then lets I/O in through a timer of
// PAUSE_US, as Herald's `WebSocketWriteScheduler` does (64 and 20): the cost of that
// scheduling on top. PAUSE_US `pipe` lets I/O in through a byte written to a pipe the loop
// watches instead of a timer (an alternative measured, not what Herald does).
import Foundation
import NIOCore
import NIOPosix

func monotonicSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

let arguments = CommandLine.arguments
guard arguments.count >= 5, let connections = Int(arguments[2]), let rounds = Int(arguments[3]),
    connections > 0, rounds > 0
else {
    FileHandle.standardError.write("usage: NIOFloor READER CONNECTIONS ROUNDS READER_CPU [CHUNK PAUSE_US]\n".data(using: .utf8)!)
    exit(2)
}
let chunk = arguments.count > 5 ? Int(arguments[5]) ?? connections : connections
/// PAUSE_US `pipe`: the loop is let through I/O by a byte written to a pipe it watches, not by a timer.
let pipeWake = arguments.count > 6 && arguments[6] == "pipe"
let pause = TimeAmount.microseconds(Int64(arguments.count > 6 ? Int(arguments[6]) ?? 0 : 0))
let messageBytes = 128

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let loop = group.next()

/// The accepted connections and the rounds' bookkeeping, touched only on the loop.
final class Fleet {
    var channels: [any Channel] = []
    var writing = 0.0
    var round = 0
    var next = 0
    var start = 0.0
    var message: ByteBuffer = ByteBuffer()
}
let fleet = NIOLoopBoundBox.makeBoxSendingValue(Fleet(), eventLoop: loop)
let allConnected = loop.makePromise(of: Void.self)
let done = loop.makePromise(of: Void.self)

let server = try ServerBootstrap(group: group)
    .serverChannelOption(.backlog, value: 4096)
    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        fleet.value.channels.append(channel)
        if fleet.value.channels.count == connections { allConnected.succeed() }
        return channel.eventLoop.makeSucceededVoidFuture()
    }
    .bind(host: "127.0.0.1", port: 0).wait()
let port = server.localAddress!.port!

/// Continues the round when the wake-up byte comes through the loop's I/O.
final class WakeHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    let onWake: @Sendable () -> Void
    init(onWake: @escaping @Sendable () -> Void) { self.onWake = onWake }
    func channelRead(context: ChannelHandlerContext, data: NIOAny) { onWake() }
}
var wakeFDs: [Int32] = [-1, -1]
if pipeWake, pipe(&wakeFDs) != 0 { fatalError("pipe") }
let wakeWriter = wakeFDs[1]

let reader = Process()
reader.executableURL = URL(fileURLWithPath: arguments[1])
let label =
    chunk < connections
    ? "SwiftNIO floor (writeAndFlush, \(chunk) per turn, "
        + (pipeWake ? "a pipe's wake-up between)" : "\(pause.nanoseconds / 1000) us pauses)")
    : "SwiftNIO floor (writeAndFlush only)"
reader.arguments = [
    "reader", String(port), String(connections), String(rounds), arguments[4], String(messageBytes), label,
]
let toReader = Pipe()
reader.standardInput = toReader
try reader.run()

/// Writes the next `chunk` connections of the round in progress; the round's time counts
/// from its start to its last write.
@Sendable func writeChunk() {
    let state = fleet.value
    let end = min(state.channels.count, state.next + chunk)
    for index in state.next..<end { state.channels[index].writeAndFlush(state.message, promise: nil) }
    state.next = end
    if end < state.channels.count {
        var byte: UInt8 = 1
        if pipeWake { _ = write(wakeWriter, &byte, 1) } else { loop.scheduleTask(in: pause) { writeChunk() } }
        return
    }
    state.writing += monotonicSeconds() - state.start
    state.round += 1
    if state.round == rounds {
        done.succeed()
        return
    }
    loop.scheduleTask(in: .seconds(1)) { startRound() }
}

@Sendable func startRound() {
    let state = fleet.value
    state.start = monotonicSeconds()
    var message = ByteBuffer(repeating: UInt8(ascii: "x"), count: messageBytes)
    _ = withUnsafeBytes(of: state.start) { message.setBytes($0, at: 0) }
    state.message = message
    state.next = 0
    writeChunk()
}

if pipeWake {
    _ = try NIOPipeBootstrap(group: loop).channelInitializer { $0.pipeline.addHandler(WakeHandler { writeChunk() }) }
        .takingOwnershipOfDescriptor(input: wakeFDs[0]).wait()
}
try allConnected.futureResult.wait()
loop.scheduleTask(in: .seconds(1)) { startRound() }
try done.futureResult.wait()
let perWrite = try loop.submit { fleet.value.writing / Double(rounds * connections) * 1e6 }.wait()
toReader.fileHandleForWriting.write("\(perWrite)\n".data(using: .utf8)!)
reader.waitUntilExit()
try server.close().wait()
exit(reader.terminationStatus)
