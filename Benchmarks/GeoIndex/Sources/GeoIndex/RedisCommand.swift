import ArgumentParser
import Dispatch
import Foundation
import HeraldGeo
import Synchronization

/// Loads the workload into a Redis server, measures GEOSEARCH latency (one client, one query
/// at a time, like Herald's latency loop) and throughput (pipelined, and several connections),
/// and checks every answer against Herald's grid built in this process.
struct RedisCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redis",
        abstract: "Redis GEOADD/GEOSEARCH on the same workload, plus the Herald-vs-Redis equality check."
    )

    @OptionGroup var workloadOptions: WorkloadOptions
    @Option var host = "127.0.0.1"
    @Option var port: Int
    @Option var key = "herald:drivers"
    @Option(help: "Unit in GEOSEARCH BYRADIUS (m or km); WITHDIST answers in it.") var unit = "m"
    @Option(help: "Grid cell size for the Herald side of the equality check.") var cellSize = DriverGrid.defaultCellSizeMeters
    @Option(help: "Commands in flight in the pipelined throughput run.") var pipeline = 32
    @Option(help: "Connections (one thread each, sequential) in the concurrent throughput run.") var connections = 4
    @Option(help: "Queries per throughput run: the first N query points (Redis needs ~20 ms for a dense one).") var qpsQueries = 2_000
    @Flag(help: "Reuse the key already loaded.") var skipLoad = false

    final class Counts: Sendable {
        let values = Mutex<[Int]>([])
    }

    func run() throws {
        let workload = workloadOptions.workload()
        let radius = workloadOptions.radius
        let limit = workloadOptions.limit
        let connection = try RESPConnection(host: host, port: port)
        let version = Self.info(connection, section: "server")["redis_version"] ?? "?"

        if !skipLoad { try load(workload, connection: connection, version: version) }

        let radiusArgument = unit == "km" ? "\(radius / 1_000)" : "\(radius)"
        let unitMeters = unit == "km" ? 1_000.0 : 1.0
        let commands: [[UInt8]] = workload.queries.map { center in
            RESPConnection.encode([
                "GEOSEARCH", key, "FROMLONLAT", "\(center.longitude)", "\(center.latitude)",
                "BYRADIUS", radiusArgument, unit, "ASC", "COUNT", "\(limit)", "WITHDIST",
            ])
        }

        // Latency: one untimed pass over the first 1,000 queries, then every query timed, one at a time.
        for command in commands.prefix(1_000) {
            try connection.send(command)
            try connection.skipValue()
        }
        var samples: [UInt64] = []
        samples.reserveCapacity(commands.count)
        var replies: [RESPConnection.Value] = []
        replies.reserveCapacity(commands.count)
        for command in commands {
            let start = Monotonic.nanoseconds()
            try connection.send(command)
            let reply = try connection.readValue()
            samples.append(Monotonic.nanoseconds() - start)
            replies.append(reply)
        }
        let redisResults = try replies.map { try Self.matches(from: $0, unitMeters: unitMeters) }
        var latency = JSONLine(measure: "redis-latency")
        latency["redis_version"] = version
        latency["command"] = "GEOSEARCH \(key) FROMLONLAT lng lat BYRADIUS \(radiusArgument) \(unit) ASC COUNT \(limit) WITHDIST"
        latency["clients"] = 1
        latency["pipeline"] = 1
        LatencyStats(nanoseconds: samples).add(to: &latency)
        latency["mean_results"] = Double(redisResults.reduce(0) { $0 + $1.count }) / Double(max(1, redisResults.count))
        latency.emit()

        compareWithHerald(workload, redisResults: redisResults)

        try pipelinedThroughput(commands, connection: connection)
        concurrentThroughput(commands)
    }

    private func load(_ workload: Workload, connection: RESPConnection, version: String) throws {
        _ = try connection.command(["DEL", key])
        let memoryBefore = Int(Self.info(connection, section: "memory")["used_memory"] ?? "0") ?? 0
        let start = Monotonic.nanoseconds()
        let membersPerCommand = 1_000
        let commandsInFlight = 16
        var pending = 0
        var batch: [UInt8] = []
        func flush() throws {
            try connection.send(batch)
            for _ in 0..<pending {
                if case .error(let message) = try connection.readValue() { throw RESPConnection.Failure(description: message) }
            }
            batch.removeAll(keepingCapacity: true)
            pending = 0
        }
        for chunk in stride(from: 0, to: workload.drivers.count, by: membersPerCommand) {
            var arguments = ["GEOADD", key]
            for i in chunk..<min(chunk + membersPerCommand, workload.drivers.count) {
                arguments += ["\(workload.drivers[i].longitude)", "\(workload.drivers[i].latitude)", workload.ids[i]]
            }
            batch += RESPConnection.encode(arguments)
            pending += 1
            if pending == commandsInFlight { try flush() }
        }
        if pending > 0 { try flush() }
        let seconds = Monotonic.seconds(since: start)
        let memoryAfter = Int(Self.info(connection, section: "memory")["used_memory"] ?? "0") ?? 0
        guard case .integer(let members) = try connection.command(["ZCARD", key]) else {
            throw RESPConnection.Failure(description: "ZCARD failed")
        }
        var line = JSONLine(measure: "redis-load")
        line["redis_version"] = version
        line["members"] = members
        line["seconds"] = seconds
        line["adds_per_s"] = Double(members) / seconds
        line["pipelining"] = "GEOADD with \(membersPerCommand) members per command, \(commandsInFlight) commands per write"
        line["used_memory_bytes"] = memoryAfter - memoryBefore
        line["bytes_per_driver"] = Double(memoryAfter - memoryBefore) / Double(max(1, members))
        line.emit()
    }

    private func compareWithHerald(_ workload: Workload, redisResults: [[ResultComparison.Match]]) {
        var grid = DriverGrid(cellSizeMeters: cellSize)
        for (i, point) in workload.drivers.enumerated() { grid.upsert(workload.ids[i], at: point, time: 0) }
        var counts: [ResultComparison.Verdict: Int] = [:]
        var tightCounts: [ResultComparison.Verdict: Int] = [:]
        var maxDifference = 0.0
        var examples: [String] = []
        var resultCount = 0
        for (q, center) in workload.queries.enumerated() {
            let herald = grid.nearest(to: center, radiusMeters: workloadOptions.radius, limit: workloadOptions.limit)
                .map { ResultComparison.Match(id: $0.driverID, distanceMeters: $0.distanceMeters) }
            resultCount += herald.count
            let comparison = ResultComparison(
                herald: herald, redis: redisResults[q], radiusMeters: workloadOptions.radius, limit: workloadOptions.limit)
            counts[comparison.verdict, default: 0] += 1
            let tight = ResultComparison(
                herald: herald, redis: redisResults[q], radiusMeters: workloadOptions.radius, limit: workloadOptions.limit,
                toleranceMeters: 0.5)
            tightCounts[tight.verdict, default: 0] += 1
            maxDifference = max(maxDifference, comparison.maxDistanceDifference)
            if let reason = comparison.reason, examples.count < 5 {
                examples.append("query \(q) (\(center.latitude), \(center.longitude)): \(reason)")
            }
        }
        var line = JSONLine(measure: "equality")
        line["queries"] = workload.queries.count
        line["exact"] = counts[.exact, default: 0]
        line["ties_only"] = counts[.tiesOnly, default: 0]
        line["mismatch"] = counts[.mismatch, default: 0]
        line["tolerance_m"] = 1.0
        line["mismatch_at_0_5m_tolerance"] = tightCounts[.mismatch, default: 0]
        line["herald_results"] = resultCount
        line["redis_results"] = redisResults.reduce(0) { $0 + $1.count }
        line["max_distance_difference_m"] = maxDifference
        line.setRaw("mismatch_examples", "[" + examples.map(JSONLine.quote).joined(separator: ",") + "]")
        line.emit()
    }

    private func pipelinedThroughput(_ commands: [[UInt8]], connection: RESPConnection) throws {
        let total = min(qpsQueries, commands.count)
        let batches: [(bytes: [UInt8], count: Int)] = stride(from: 0, to: total, by: pipeline).map { start in
            let end = min(start + pipeline, total)
            return (commands[start..<end].reduce(into: []) { $0 += $1 }, end - start)
        }
        var done = 0
        let start = Monotonic.nanoseconds()
        for batch in batches {
            try connection.send(batch.bytes)
            for _ in 0..<batch.count { try connection.skipValue() }
            done += batch.count
        }
        let now = Monotonic.nanoseconds()
        var line = JSONLine(measure: "redis-qps")
        line["mode"] = "pipelined"
        line["clients"] = 1
        line["pipeline"] = pipeline
        line["queries"] = done
        line["seconds"] = Double(now - start) / 1e9
        line["qps"] = Double(done) / (Double(now - start) / 1e9)
        line.emit()
    }

    private func concurrentThroughput(_ commands: [[UInt8]]) {
        let counts = Counts()
        let group = DispatchGroup()
        let host = host
        let port = port
        let connections = connections
        let total = min(qpsQueries, commands.count)
        let begin = Monotonic.nanoseconds()
        for c in 0..<connections {
            group.enter()
            let thread = Thread {
                var done = 0
                do {
                    let connection = try RESPConnection(host: host, port: port)
                    // Client c sends queries c, c + connections, c + 2·connections, … of the first `total`.
                    for q in stride(from: c, to: total, by: connections) {
                        try connection.send(commands[q])
                        try connection.skipValue()
                        done += 1
                    }
                } catch {
                    FileHandle.standardError.write(Data("client \(c): \(error)\n".utf8))
                    done = -1
                }
                counts.values.withLock { $0.append(done) }
                group.leave()
            }
            thread.start()
        }
        group.wait()
        let elapsed = Monotonic.seconds(since: begin)
        let perClient = counts.values.withLock { $0 }
        var line = JSONLine(measure: "redis-qps")
        line["mode"] = "concurrent"
        line["clients"] = connections
        line["pipeline"] = 1
        line["queries"] = perClient.reduce(0, +)
        line["seconds"] = elapsed
        line["qps"] = Double(perClient.reduce(0, +)) / elapsed
        line["failed_clients"] = perClient.filter { $0 < 0 }.count
        line.emit()
    }

    static func matches(from reply: RESPConnection.Value, unitMeters: Double) throws -> [ResultComparison.Match] {
        guard case .array(let items?) = reply else { throw RESPConnection.Failure(description: "unexpected GEOSEARCH reply \(reply)") }
        return try items.map { item in
            guard case .array(let pair?) = item, pair.count == 2, case .bulk(let id?) = pair[0], case .bulk(let distance?) = pair[1],
                let value = Double(String(decoding: distance, as: UTF8.self))
            else { throw RESPConnection.Failure(description: "unexpected GEOSEARCH item \(item)") }
            return ResultComparison.Match(id: String(decoding: id, as: UTF8.self), distanceMeters: value * unitMeters)
        }
    }

    static func info(_ connection: RESPConnection, section: String) -> [String: String] {
        guard case .bulk(let bytes?)? = try? connection.command(["INFO", section]) else { return [:] }
        var fields: [String: String] = [:]
        for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
        }
        return fields
    }
}
