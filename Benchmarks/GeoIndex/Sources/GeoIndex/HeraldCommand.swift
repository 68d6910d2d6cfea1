import ArgumentParser
import HeraldGeo

/// In-process measurements of `DriverGrid` (and `DriverIndex`, its locked wrapper), on one thread.
struct HeraldCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "Build, memory, query latency/QPS and update rate of HeraldGeo."
    )

    @OptionGroup var workloadOptions: WorkloadOptions
    @Option(help: "Grid cell size in metres.") var cellSize = DriverGrid.defaultCellSizeMeters
    @Option(help: "Seconds of back-to-back queries for the QPS figure.") var qpsSeconds = 5.0
    @Option(help: "Location updates to time (0: skip).") var updates = 2_000_000
    @Option(help: "Queries (the first N) for the Redis-like variant: everyone within the radius, sorted, then the first `limit` (0: skip).")
    var unboundedQueries = 2_000

    func run() throws {
        let workload = workloadOptions.workload()
        let radius = workloadOptions.radius
        let limit = workloadOptions.limit
        let moves = workload.moves(count: updates)

        // Build, with the heap measured around it (the workload's arrays already exist).
        let heapBefore = HeapUsage.allocatedBytes()
        var grid = DriverGrid(cellSizeMeters: cellSize)
        let buildStart = Monotonic.nanoseconds()
        for (i, point) in workload.drivers.enumerated() {
            grid.upsert(workload.ids[i], at: point, time: 1_700_000_000_000)
        }
        let buildSeconds = Monotonic.seconds(since: buildStart)
        let heapAfter = HeapUsage.allocatedBytes()
        var build = JSONLine(measure: "herald-build")
        build["cell_size_m"] = cellSize
        build["drivers"] = grid.count
        build["seconds"] = buildSeconds
        build["inserts_per_s"] = Double(grid.count) / buildSeconds
        build["heap_bytes"] = heapAfter - heapBefore
        build["bytes_per_driver"] = Double(heapAfter - heapBefore) / Double(max(1, grid.count))
        build["self_reported_bytes_per_driver"] = Double(grid.approximateMemoryBytes) / Double(max(1, grid.count))
        build.emit()

        // Per-query latency, after one untimed pass over the same queries.
        var sink = 0
        for center in workload.queries { sink &+= grid.nearest(to: center, radiusMeters: radius, limit: limit).count }
        var samples: [UInt64] = []
        samples.reserveCapacity(workload.queries.count)
        var results = 0
        for center in workload.queries {
            let start = Monotonic.nanoseconds()
            let matches = grid.nearest(to: center, radiusMeters: radius, limit: limit)
            samples.append(Monotonic.nanoseconds() - start)
            results += matches.count
        }
        var latency = JSONLine(measure: "herald-latency")
        latency["cell_size_m"] = cellSize
        latency["api"] = "DriverGrid.nearest"
        LatencyStats(nanoseconds: samples).add(to: &latency)
        latency["mean_results"] = Double(results) / Double(max(1, samples.count))
        latency.emit()

        // What Redis does for COUNT without ANY: find everyone within the radius, sort, keep `limit`.
        // Separates the algorithm (stopping at the k-th) from the implementation.
        if unboundedQueries > 0 {
            var unboundedSamples: [UInt64] = []
            var found = 0
            for center in workload.queries.prefix(unboundedQueries) {
                let start = Monotonic.nanoseconds()
                let everyone = grid.nearest(to: center, radiusMeters: radius, limit: .max)
                let first = Array(everyone.prefix(limit))
                unboundedSamples.append(Monotonic.nanoseconds() - start)
                found += everyone.count
                sink &+= first.count
            }
            var line = JSONLine(measure: "herald-latency")
            line["cell_size_m"] = cellSize
            line["api"] = "DriverGrid.nearest(limit: .max), first \(limit) kept"
            LatencyStats(nanoseconds: unboundedSamples).add(to: &line)
            line["mean_within_radius"] = Double(found) / Double(max(1, unboundedSamples.count))
            line.emit()
        }

        emitThroughput(measure: "herald-qps", api: "DriverGrid.nearest", workload: workload) { center in
            grid.nearest(to: center, radiusMeters: radius, limit: limit).count
        }

        let index = DriverIndex(cellSizeMeters: cellSize)
        index.withGrid { $0 = grid }
        emitThroughput(measure: "herald-qps", api: "DriverIndex.nearest", workload: workload) { center in
            index.nearest(to: center, radiusMeters: radius, limit: limit).count
        }

        if !moves.isEmpty {
            let start = Monotonic.nanoseconds()
            for (k, move) in moves.enumerated() {
                grid.upsert(workload.ids[Int(move.driver)], at: move.point, time: 1_700_000_000_000 + Int64(k))
            }
            emitUpdates(api: "DriverGrid.upsert", count: moves.count, seconds: Monotonic.seconds(since: start), drivers: grid.count)

            let indexStart = Monotonic.nanoseconds()
            for (k, move) in moves.enumerated() {
                index.upsert(workload.ids[Int(move.driver)], at: move.point, time: 1_700_000_000_000 + Int64(k))
            }
            emitUpdates(api: "DriverIndex.upsert", count: moves.count, seconds: Monotonic.seconds(since: indexStart), drivers: index.count)
        }
        if sink == -1 { print(sink) }
    }

    private func emitThroughput(measure: String, api: String, workload: Workload, _ query: (GeoPoint) -> Int) {
        var done = 0
        var results = 0
        let start = Monotonic.nanoseconds()
        let deadline = start + UInt64(qpsSeconds * 1e9)
        var now = start
        while now < deadline {
            for center in workload.queries {
                results &+= query(center)
            }
            done += workload.queries.count
            now = Monotonic.nanoseconds()
        }
        let seconds = Double(now - start) / 1e9
        var line = JSONLine(measure: measure)
        line["cell_size_m"] = cellSize
        line["api"] = api
        line["threads"] = 1
        line["queries"] = done
        line["seconds"] = seconds
        line["qps"] = Double(done) / seconds
        line["mean_results"] = Double(results) / Double(max(1, done))
        line.emit()
    }

    private func emitUpdates(api: String, count: Int, seconds: Double, drivers: Int) {
        var line = JSONLine(measure: "herald-updates")
        line["cell_size_m"] = cellSize
        line["api"] = api
        line["updates"] = count
        line["seconds"] = seconds
        line["updates_per_s"] = Double(count) / seconds
        line["drivers_after"] = drivers
        line.emit()
    }
}
