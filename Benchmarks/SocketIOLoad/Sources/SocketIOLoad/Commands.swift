import ArgumentParser
import Foundation
import NIOCore
import NIOPosix

@main
struct SocketIOLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "SocketIOLoad",
        abstract: "Socket.IO (EIO 4 / SIO 5 over WebSocket) load generator. Each measurement prints one JSON line on stdout.",
        subcommands: [Fanout.self, Memory.self, MemoryWorker.self, Storm.self, Churn.self]
    )
}

// MARK: Shared options

struct ClientOptions: ParsableArguments {
    @Option(help: "Server base URL (loopback only); several, comma-separated, spread the clients over them in turn (a cluster's nodes).")
    var url = "http://127.0.0.1:8080"

    @Option(help: "Socket.IO path.")
    var path = "/socket.io/"

    @Option(help: "Token sent in the CONNECT auth payload ({\"token\":…}).")
    var token: String?

    @Option(name: .customLong("token-cmd"), help: "Shell command that prints the client token (run once).")
    var tokenCommand: String?

    @Flag(name: .customLong("token-in-query"), help: "Send the token as ?token= instead of in the CONNECT payload.")
    var tokenInQuery = false

    @Option(name: .customLong("source-ips"), help: "Comma-separated 127.0.0.x source addresses to spread connections over.")
    var sourceIPs: String?

    @Option(help: "Event loop threads of the generator.")
    var threads = 1

    @Option(name: .customLong("connect-concurrency"), help: "Connection attempts in flight at once.")
    var connectConcurrency = 200

    @Option(name: .customLong("connect-timeout"), help: "TCP connect timeout, seconds (the whole handshake gets twice this).")
    var connectTimeout = 15

    @Option(help: "Event name that counts as a delivery.")
    var event = "tick"

    @Option(help: "A label copied into the JSON summary (e.g. herald, python-socketio).")
    var label = ""

    @Option(name: .customLong("server-pid"), help: "Server process id: its RSS and CPU time are reported.")
    var serverPID: Int32?

    @Option(name: .customLong("tokens-file"), help: "One token per line: client i (counting from --client-offset) sends line i's token.")
    var tokensFile: String?

    @Option(name: .customLong("client-offset"), help: "The first client's number (tokens, servers, and with --rooms its room).")
    var clientOffset = 0

    @Option(
        name: .customLong("probe"),
        help: "name=pid of another process (a second node, the database, Redis) whose CPU, with its child processes', is reported as <name>_cpu_s; repeatable.")
    var probes: [String] = []

    func resolvedToken() throws -> String? {
        if let token { return token }
        if let tokenCommand { return try runShell(tokenCommand) }
        return nil
    }

    /// The first of `url`'s servers (publishing and whoami go there unless told otherwise).
    var firstURL: String { String(url.split(separator: ",").first ?? Substring(url)) }

    func clientConfig(whoami: Bool = false) throws -> ClientConfig {
        let bases = try url.split(separator: ",").map { try HTTPURL(String($0)) }
        guard !bases.isEmpty else { throw ValidationError("--url is empty") }
        let token = try resolvedToken()
        var uri = path.hasSuffix("/") ? path : path + "/"
        uri += "?EIO=4&transport=websocket"
        if tokenInQuery, let token { uri += "&token=" + (token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token) }
        let servers = try bases.map { try SocketAddress(ipAddress: $0.host == "localhost" ? "127.0.0.1" : $0.host, port: $0.port) }
        let sources = try (sourceIPs ?? "").split(separator: ",").map { try SocketAddress(ipAddress: String($0), port: 0) }
        for source in sources {
            guard source.ipAddress?.hasPrefix("127.") == true else { throw ValidationError("source addresses must be 127.x.x.x") }
        }
        for base in bases where !(base.host.hasPrefix("127.") || base.host == "localhost" || base.host == "::1") {
            throw ValidationError("only loopback targets are allowed: \(base.host)")
        }
        let tokens =
            try tokensFile.map { path in
                try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
            } ?? []
        return ClientConfig(
            tokens: tokens, clientOffset: clientOffset, servers: servers, hostHeaders: bases.map { "\($0.host):\($0.port)" }, requestURI: uri,
            token: tokenInQuery ? nil : token,
            sourceAddresses: sources, eventName: event, connectTimeout: .seconds(Int64(connectTimeout)),
            whoamiAfterRecovery: whoami)
    }

    var header: [(String, JSON)] {
        [("label", .string(label)), ("url", .string(url))]
    }
}

struct PublishOptions: ParsableArguments {
    @Option(name: .customLong("publish-url"), help: "Publish endpoint (default: <url>/api/v1/realtime/publish).")
    var publishURL: String?

    @Option(name: .customLong("publish-token"), help: "Bearer token for the publish endpoint.")
    var publishToken: String?

    @Option(name: .customLong("publish-token-cmd"), help: "Shell command that prints the publish token.")
    var publishTokenCommand: String?

    @Option(help: "Room to publish to (Herald: user:<sub>; the python peer: bench).")
    var room = "user:bench"

    @Option(help: "Many small rooms: event s goes to <room><client-offset + s mod rooms> (one client each, e.g. --room user:bench- with --tokens-file).")
    var rooms: Int?

    @Option(help: "Events published per second.")
    var rate: Double = 30

    @Option(help: "Size of each event's payload object as JSON, bytes.")
    var payloadBytes = 100

    @Option(help: "Keep-alive publishing connections used in parallel.")
    var publishers = 4

    @Option(name: .customLong("max-backlog"), help: "Publishes waiting for a free connection beyond this are dropped.")
    var maxBacklog = 10_000

    @Option(help: "Events per publish request: above 1, batch publishes to <publish-url>/batch (default 1).")
    var batch = 1

    func publisherConfig(base: String, event: String, persist: Bool, roomOffset: Int = 0) throws -> PublisherConfig {
        guard batch >= 1 else { throw ValidationError("--batch must be at least 1") }
        let single = publishURL ?? (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/api/v1/realtime/publish"
        let target = try HTTPURL(batch > 1 ? single + "/batch" : single)
        guard target.host.hasPrefix("127.") || target.host == "localhost" else { throw ValidationError("only loopback targets are allowed") }
        let bearer = try publishToken ?? publishTokenCommand.map(runShell)
        return PublisherConfig(
            server: try SocketAddress(ipAddress: target.host == "localhost" ? "127.0.0.1" : target.host, port: target.port),
            hostHeader: "\(target.host):\(target.port)", path: target.path, bearer: bearer, room: room, event: event,
            persist: persist, payloadBytes: payloadBytes, connections: publishers, maxBacklog: maxBacklog, rooms: rooms, roomOffset: roomOffset,
            batch: batch)
    }
}

/// Reads the server's RSS and CPU time (when `--server-pid` is given).
struct ServerProbe {
    let pid: Int32?
    var rss: Int? { pid.flatMap(readRSS) }
    var cpu: Double? { pid.flatMap(cpuSeconds) }
    var fds: Int? { pid.flatMap(countFDs) }
}

func emit(_ fields: [(String, JSON)]) {
    FileHandle.standardOutput.write(Data((JSON.object(fields).text + "\n").utf8))
}

func sleepSeconds(_ s: Double) async {
    try? await Task.sleep(for: .milliseconds(Int(s * 1000)))
}

/// Creates a publisher on `loop` (it lives there; only the loop-bound handle leaves).
func makePublisher(loop: any EventLoop, config: PublisherConfig, acked: SharedCounter? = nil) async throws -> NIOLoopBound<Publisher> {
    try await loop.submit { NIOLoopBound(Publisher(loop: loop, config: config, ackedShared: acked), eventLoop: loop) }.get()
}

/// Runs the publisher and waits for it.
func runPublisher(_ bound: NIOLoopBound<Publisher>, loop: any EventLoop, rate: Double, seconds: Double) async throws {
    try await loop.flatSubmit { bound.value.connect() }.get()
    try await loop.flatSubmit { bound.value.run(rate: rate, duration: .milliseconds(Int64(seconds * 1000))) }.get()
}

/// Waits until `expected` deliveries arrived, or nothing arrived for `idle` seconds, or `max`
/// seconds passed. Returns the seconds waited.
func drain(_ fleet: Fleet, expected: Int, idle: Double, max: Double) async throws -> Double {
    let started = monotonicNanos()
    var last = -1
    var lastChange = started
    while true {
        let snap = try await fleet.snapshot()
        let now = monotonicNanos()
        if snap.deliveries >= expected { break }
        if snap.deliveries != last {
            last = snap.deliveries
            lastChange = now
        } else if Double(now - lastChange) / 1e9 >= idle {
            break
        }
        if Double(now - started) / 1e9 >= max { break }
        try await Task.sleep(for: .milliseconds(100))
    }
    return Double(monotonicNanos() - started) / 1e9
}

// MARK: fanout

struct Fanout: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "N clients in one room; a publisher emits fixed-rate events; publish→receive latency and deliveries/s.")

    @OptionGroup var client: ClientOptions
    @OptionGroup var publish: PublishOptions

    @Option(help: "Clients to connect.")
    var connections = 10_000

    @Option(help: "Seconds of publishing.")
    var duration: Double = 30

    @Option(help: "Seconds to wait after connecting before publishing.")
    var warmup: Double = 2

    @Option(name: .customLong("drain-idle"), help: "After publishing, stop waiting once nothing arrived for this many seconds.")
    var drainIdle: Double = 3

    @Option(name: .customLong("drain-max"), help: "After publishing, wait at most this many seconds for deliveries.")
    var drainMax: Double = 20

    @Flag(help: "Publish with persist: true (Herald stores the events; default false).")
    var persist = false

    func run() async throws {
        var config = try client.clientConfig()
        config.rooms = publish.rooms
        let probe = ServerProbe(pid: client.serverPID)
        let fleet = try Fleet(threads: client.threads, config: config)
        let rssBefore = probe.rss
        log("fanout: connecting \(connections) clients to \(client.url)")
        let connect = try await fleet.connectNew(count: connections, offset: client.clientOffset, concurrency: client.connectConcurrency)
        log("fanout: \(connect.connected) connected, \(connect.failed) failed in \(String(format: "%.1f", connect.seconds)) s")
        await sleepSeconds(warmup)
        let rssConnected = probe.rss
        let loop = fleet.publisherLoop
        let bound = try await makePublisher(
            loop: loop, config: try publish.publisherConfig(base: client.firstURL, event: client.event, persist: persist, roomOffset: client.clientOffset))
        let others = try ProcessProbes(client.probes)
        let othersBefore = others.cpu()
        let cpuBefore = probe.cpu
        let genCPUBefore = cpuSeconds(pid: getpid())
        let wallBefore = monotonicNanos()
        let before = try await fleet.snapshot()
        log("fanout: publishing \(publish.rate)/s for \(duration) s to \(publish.room)")
        try await runPublisher(bound, loop: loop, rate: publish.rate, seconds: duration)
        let okSeqs = try await loop.submit { bound.value.okSeqs }.get()
        let ok = okSeqs.distinct
        // One room per client (--rooms): each event has one receiver.
        let receiversPerEvent = publish.rooms == nil ? connect.connected : 1
        let expected = ok * receiversPerEvent + before.deliveries
        let drained = try await drain(fleet, expected: expected, idle: drainIdle, max: drainMax)
        let cpuAfter = probe.cpu
        let othersAfter = others.cpu()
        let genCPUAfter = cpuSeconds(pid: getpid())
        let wall = Double(monotonicNanos() - wallBefore) / 1e9
        let snap = try await fleet.snapshot()
        let missing: Int
        if let rooms = publish.rooms {
            var perRoom = [Int](repeating: 0, count: rooms)
            okSeqs.forEachMember { perRoom[$0 % rooms] += 1 }
            let expectedByRoom = perRoom
            let offset = client.clientOffset
            missing = try await fleet.onEveryLoop { stats, loop in
                loop.makeSucceededFuture(stats.sessions.reduce(0) { $0 + max(0, expectedByRoom[($1.index - offset) % rooms] - $1.received) })
            }.reduce(0, +)
        } else {
            missing = try await fleet.onEveryLoop { stats, loop in
                loop.makeSucceededFuture(stats.sessions.reduce(0) { $0 + ($1.connectedOnce ? $1.seqs.missing(of: okSeqs) : 0) })
            }.reduce(0, +)
        }
        let publisherSummary = try await loop.submit { bound.value.summary() }.get()
        let firstSend = try await loop.submit { bound.value.firstSend }.get()
        let received = snap.deliveries - before.deliveries
        let window = Double(snap.lastReceive &- firstSend) / 1e9
        var out: [(String, JSON)] = [("test", .string("fanout"))] + client.header
        out += [
            ("connections", .int(connections)),
            ("connected", .int(connect.connected)),
            ("connect_failed", .int(connect.failed)),
            ("connect_seconds", .double(connect.seconds)),
            ("rate", .double(publish.rate)),
            ("duration_s", .double(duration)),
            ("payload_bytes", .int(publish.payloadBytes)),
            ("persist", .bool(persist)),
            ("offered_deliveries_per_s", .double(publish.rate * Double(receiversPerEvent))),
            ("rooms", publish.rooms.map { .int($0) } ?? .null),
            ("client_offset", .int(client.clientOffset)),
        ]
        out += publisherSummary
        out += [
            ("expected_deliveries", .int(ok * receiversPerEvent)),
            ("deliveries", .int(received)),
            ("missing_deliveries", .int(missing)),
            ("duplicates", .int(snap.duplicates)),
            ("strays", .int(snap.strays)),
            ("deliveries_per_s", .double(window > 0 ? Double(received) / window : 0)),
            ("delivery_window_s", .double(window)),
            ("drain_s", .double(drained)),
        ]
        out += snap.latency.summaryMs(prefix: "latency_")
        // With several servers: the clients of each (node1 is where events are published).
        for (server, histogram) in snap.latencyByServer.enumerated() {
            out += histogram.summaryMs(prefix: "latency_node\(server + 1)_")
        }
        out += [
            ("unexpected_closes", .int(snap.unexpectedCloses)),
            ("still_connected", .int(snap.connected)),
            ("pings_answered", .int(snap.pingsAnswered)),
            ("connect_failures", .object(snap.connectFailures.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
        ]
        if let rssBefore, let rssConnected {
            out.append(("server_rss_before_bytes", .int(rssBefore)))
            out.append(("server_rss_connected_bytes", .int(rssConnected)))
        }
        if let rss = probe.rss { out.append(("server_rss_after_bytes", .int(rss))) }
        if let cpuBefore, let cpuAfter {
            out.append(("server_cpu_s", .double(cpuAfter - cpuBefore)))
            out.append(("server_cpu_util", .double((cpuAfter - cpuBefore) / wall)))
        }
        if let genCPUBefore, let genCPUAfter {
            out.append(("generator_cpu_util", .double((genCPUAfter - genCPUBefore) / wall)))
        }
        out += others.fields(before: othersBefore, after: othersAfter)
        out.append(("generator_rss_bytes", .int(readRSS(pid: getpid()) ?? 0)))
        try await loop.submit { bound.value.close() }.get()
        try await fleet.closeAll()
        emit(out)
        await fleet.shutdown()
    }
}

// MARK: memory

struct Memory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open N idle connections and report the server's RSS growth per connection (VmRSS).")

    @OptionGroup var client: ClientOptions

    @Option(help: "Idle clients to connect (in all processes).")
    var connections = 10_000

    @Option(help: "Generator processes to split the clients over (each holds at most ~19,900 sockets).")
    var processes = 1

    @Option(help: "Seconds to wait after connecting before reading the RSS.")
    var settle: Double = 5

    @Option(help: "Seconds to wait after closing every connection before reading the RSS again.")
    var settleAfterClose: Double = 5

    func validate() throws {
        guard client.serverPID != nil else { throw ValidationError("--server-pid is required") }
        guard processes >= 1 else { throw ValidationError("--processes must be at least 1") }
    }

    func run() async throws {
        let probe = ServerProbe(pid: client.serverPID)
        let rssBefore = probe.rss ?? 0
        let fdsBefore = probe.fds ?? 0
        var connected = 0
        var failed = 0
        var failures: [String: Int] = [:]
        var connectSeconds = 0.0
        var generatorRSS = 0
        var fleet: Fleet?
        var workers: [WorkerProcess] = []
        let started = monotonicNanos()
        if processes == 1 {
            let f = try Fleet(threads: client.threads, config: try client.clientConfig())
            fleet = f
            log("memory: connecting \(connections) idle clients")
            let result = try await f.connectNew(count: connections, concurrency: client.connectConcurrency)
            connected = result.connected
            failed = result.failed
            connectSeconds = result.seconds
            failures = try await f.snapshot().connectFailures
        } else {
            let share = connections / processes
            for p in 0..<processes {
                let count = p == processes - 1 ? connections - share * (processes - 1) : share
                workers.append(try WorkerProcess(arguments: workerArguments(count: count, offset: share * p)))
            }
            log("memory: \(processes) worker processes connecting \(connections) idle clients")
            for worker in workers {
                let line = worker.readLine() ?? "{}"
                connected += Self.int("connected", in: line)
                failed += Self.int("failed", in: line)
                generatorRSS += Self.int("rss", in: line)
                if failed > 0 { log("memory worker: \(line)") }
            }
            connectSeconds = Double(monotonicNanos() - started) / 1e9
        }
        log("memory: \(connected) connected, \(failed) failed; settling \(settle) s")
        await sleepSeconds(settle)
        let alive = probe.rss != nil
        if !alive { log("memory: the server process \(client.serverPID ?? 0) is gone (crashed?)") }
        let rssConnected = probe.rss ?? 0
        let fdsConnected = probe.fds ?? 0
        let stillConnected: Int
        if let fleet {
            stillConnected = try await fleet.connectedCount()
            generatorRSS = readRSS(pid: getpid()) ?? 0
            try await fleet.closeAll()
        } else {
            var n = 0
            for worker in workers {
                worker.send("close")
                n += Self.int("still_connected", in: worker.readLine() ?? "{}")
            }
            stillConnected = n
            for worker in workers { worker.wait() }
        }
        await sleepSeconds(settleAfterClose)
        let rssAfterClose = probe.rss ?? 0
        let fdsAfterClose = probe.fds ?? 0
        let growth = rssConnected - rssBefore
        func bytes(_ v: Int) -> JSON { alive ? .int(v) : .null }
        var out: [(String, JSON)] = [("test", .string("memory"))] + client.header
        out += [
            ("server_alive", .bool(alive)),
            ("connections", .int(connections)),
            ("processes", .int(processes)),
            ("source_ips", .string(client.sourceIPs ?? "")),
            ("connected", .int(connected)),
            ("connect_failed", .int(failed)),
            ("connect_seconds", .double(connectSeconds)),
            ("still_connected_at_measure", .int(stillConnected)),
            ("server_rss_before_bytes", .int(rssBefore)),
            ("server_rss_connected_bytes", bytes(rssConnected)),
            ("server_rss_after_close_bytes", bytes(rssAfterClose)),
            ("rss_growth_bytes", bytes(growth)),
            ("bytes_per_connection", bytes(connected > 0 ? growth / connected : 0)),
            ("server_fds_before", .int(fdsBefore)),
            ("server_fds_connected", .int(fdsConnected)),
            ("server_fds_after_close", .int(fdsAfterClose)),
            ("generator_rss_bytes", .int(generatorRSS)),
            ("connect_failures", .object(failures.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
        ]
        emit(out)
        await fleet?.shutdown()
    }

    func workerArguments(count: Int, offset: Int) -> [String] {
        var args = ["memory-worker", "--url", client.url, "--path", client.path, "--connections", String(count), "--offset", String(offset)]
        args += ["--threads", String(client.threads), "--connect-concurrency", String(max(1, client.connectConcurrency / processes))]
        args += ["--connect-timeout", String(client.connectTimeout), "--event", client.event]
        if let token = client.token { args += ["--token", token] }
        if let cmd = client.tokenCommand { args += ["--token-cmd", cmd] }
        if client.tokenInQuery { args.append("--token-in-query") }
        if let ips = client.sourceIPs { args += ["--source-ips", ips] }
        return args
    }

    static func int(_ key: String, in line: String) -> Int {
        guard let range = line.range(of: "\"\(key)\":") else { return 0 }
        return Int(line[range.upperBound...].prefix { $0.isNumber || $0 == "-" }) ?? 0
    }
}

/// A child generator process spoken to by lines on stdin/stdout.
final class WorkerProcess {
    let process = Process()
    let input = Pipe()
    let output = Pipe()
    private var buffer = Data()

    init(arguments: [String]) throws {
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// The next line of the worker's stdout (blocking); nil at EOF.
    func readLine() -> String? {
        while true {
            if let nl = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<nl], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...nl)
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffer.append(chunk)
        }
    }

    func send(_ line: String) {
        input.fileHandleForWriting.write(Data((line + "\n").utf8))
    }

    func wait() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}

struct MemoryWorker: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory-worker", abstract: "(internal) Holds idle connections for `memory --processes`.", shouldDisplay: false)

    @OptionGroup var client: ClientOptions

    @Option var connections: Int
    @Option var offset = 0

    func run() async throws {
        let fleet = try Fleet(threads: client.threads, config: try client.clientConfig())
        let result = try await fleet.connectNew(count: connections, offset: offset, concurrency: client.connectConcurrency)
        let failures = try await fleet.snapshot().connectFailures
        emit([
            ("connected", .int(result.connected)), ("failed", .int(result.failed)), ("rss", .int(readRSS(pid: getpid()) ?? 0)),
            ("failures", .object(failures.map { ($0.key, .int($0.value)) })),
        ])
        // Hold until the parent says "close" (or its pipe closes).
        while let line = Swift.readLine(), line != "close" {}
        let still = try await fleet.connectedCount()
        try await fleet.closeAll()
        emit([("still_connected", .int(still))])
        await fleet.shutdown()
    }
}

// MARK: storm

struct Storm: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Reconnect storm: persisted events flow, every connection drops at once and reconnects with recovery ({pid, offset}).")

    @OptionGroup var client: ClientOptions
    @OptionGroup var publish: PublishOptions

    @Option(help: "Clients.")
    var connections = 5_000

    @Option(help: "Seconds of publishing before the drop.")
    var before: Double = 5

    @Option(help: "Seconds of publishing after the drop.")
    var after: Double = 10

    @Option(name: .customLong("reconnect-concurrency"), help: "Reconnect attempts in flight at once (default: all).")
    var reconnectConcurrency: Int?

    @Option(name: .customLong("drain-max"), help: "After publishing, wait at most this many seconds for the missing events.")
    var drainMax: Double = 10

    @Flag(help: "After a recovering CONNECT, ask Herald's whoami whether the session was recovered.")
    var whoami = false

    func run() async throws {
        let config = try client.clientConfig(whoami: whoami)
        let probe = ServerProbe(pid: client.serverPID)
        let fleet = try Fleet(threads: client.threads, config: config)
        log("storm: connecting \(connections) clients")
        let connect = try await fleet.connectNew(count: connections, concurrency: client.connectConcurrency)
        log("storm: \(connect.connected) connected, \(connect.failed) failed")
        await sleepSeconds(1)
        let loop = fleet.publisherLoop
        let bound = try await makePublisher(
            loop: loop, config: try publish.publisherConfig(base: client.firstURL, event: client.event, persist: true), acked: config.ackedPrefix)
        try await loop.flatSubmit { bound.value.connect() }.get()
        let rate = publish.rate
        let total = before + after
        let finished = try await loop.submit {
            bound.value.run(rate: rate, duration: .milliseconds(Int64(total * 1000)))
        }.get()
        await sleepSeconds(before)
        let target = try await loop.submit { bound.value.ackedPrefix }.get()
        let cpuBefore = probe.cpu
        log("storm: dropping every connection (events 1...\(target) acknowledged) and reconnecting")
        let reconnect = try await fleet.dropAndReconnect(concurrency: reconnectConcurrency ?? connections, target: target)
        log("storm: \(reconnect.connected) reconnected, \(reconnect.failed) failed in \(String(format: "%.2f", reconnect.seconds)) s")
        try await finished.get()
        let okSeqs = try await loop.submit { bound.value.okSeqs }.get()
        let lastOK = okSeqs.distinct
        // Wait for the stragglers: every reconnected client should end with every event.
        let started = monotonicNanos()
        var complete = 0
        while true {
            complete = try await fleet.onEveryLoop { stats, loop in
                loop.makeSucceededFuture(stats.sessions.reduce(0) { $0 + ($1.phase == .connected && $1.seqs.missing(of: okSeqs) == 0 ? 1 : 0) })
            }.reduce(0, +)
            if complete >= reconnect.connected || Double(monotonicNanos() - started) / 1e9 >= drainMax { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let cpuAfter = probe.cpu
        struct Tally: Sendable {
            var sidKept = 0, whoamiTrue = 0, whoamiFalse = 0, caughtUp = 0, missing = 0, clientsMissing = 0
            /// Missing seqs relative to the client's gap-free prefix at the drop (+1 = the
            /// first event after what it had), counted over clients.
            var missingRelative: [Int: Int] = [:]
            var example: String = ""
        }
        let tallies = try await fleet.onEveryLoop { stats, loop in
            var t = Tally()
            for s in stats.sessions where s.recovering {
                if s.sidKept == true { t.sidKept += 1 }
                if s.whoamiRecovered == true { t.whoamiTrue += 1 }
                if s.whoamiRecovered == false { t.whoamiFalse += 1 }
                if s.caughtUp { t.caughtUp += 1 }
                let list = s.seqs.missingList(of: okSeqs)
                t.missing += list.count
                if !list.isEmpty {
                    t.clientsMissing += 1
                    for seq in list { t.missingRelative[seq - s.maxSeqAtDrop, default: 0] += 1 }
                    if t.example.isEmpty {
                        t.example = "client \(s.index): had 1...\(s.maxSeqAtDrop) (offset \(s.offsetAtDrop ?? "none")) at the drop; misses \(list.prefix(10))"
                    }
                }
            }
            return loop.makeSucceededFuture(t)
        }
        let tally = tallies.reduce(into: Tally()) { acc, t in
            acc.sidKept += t.sidKept
            acc.whoamiTrue += t.whoamiTrue
            acc.whoamiFalse += t.whoamiFalse
            acc.caughtUp += t.caughtUp
            acc.missing += t.missing
            acc.clientsMissing += t.clientsMissing
            for (k, v) in t.missingRelative { acc.missingRelative[k, default: 0] += v }
            if acc.example.isEmpty { acc.example = t.example }
        }
        let snap = try await fleet.snapshot()
        let publisherSummary = try await loop.submit { bound.value.summary() }.get()
        let n = Double(max(1, connect.connected))
        var out: [(String, JSON)] = [("test", .string("storm"))] + client.header
        out += [
            ("connections", .int(connections)),
            ("connected", .int(connect.connected)),
            ("rate", .double(rate)),
            ("seconds_before_drop", .double(before)),
            ("seconds_after_drop", .double(after)),
            ("acked_seq_at_drop", .int(target)),
            ("events_published_ok", .int(lastOK)),
            ("reconnected", .int(reconnect.connected)),
            ("reconnect_failed", .int(reconnect.failed)),
            ("complete_clients", .int(complete)),
            ("share_complete", .double(Double(complete) / n)),
            ("share_caught_up", .double(Double(tally.caughtUp) / n)),
            ("share_sid_kept", .double(Double(tally.sidKept) / n)),
            ("whoami_recovered_true", .int(tally.whoamiTrue)),
            ("whoami_recovered_false", .int(tally.whoamiFalse)),
            ("clients_missing_events", .int(tally.clientsMissing)),
            ("missing_events", .int(tally.missing)),
            (
                "missing_relative_to_prefix_at_drop",
                .object(tally.missingRelative.sorted { $0.value > $1.value }.prefix(8).map { (String($0.key), .int($0.value)) })
            ),
            ("missing_example", .string(tally.example)),
            ("duplicates", .int(snap.duplicates)),
        ]
        out += snap.catchUp.summaryMs(prefix: "catch_up_")
        out += snap.reconnectLatency.summaryMs(prefix: "reconnect_")
        out += snap.latency.summaryMs(prefix: "latency_")
        out += publisherSummary
        out += [
            ("unexpected_closes", .int(snap.unexpectedCloses)),
            ("connect_failures", .object(snap.connectFailures.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
        ]
        if let cpuBefore, let cpuAfter { out.append(("server_cpu_s_storm", .double(cpuAfter - cpuBefore))) }
        if let rss = probe.rss { out.append(("server_rss_bytes", .int(rss))) }
        try await loop.submit { bound.value.close() }.get()
        try await fleet.closeAll()
        emit(out)
        await fleet.shutdown()
    }
}
