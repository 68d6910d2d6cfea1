import ArgumentParser

@main
struct GeoIndex: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Herald's driver grid (HeraldGeo) against Redis GEOSEARCH on identical seeded data; one JSON line per measurement.",
        subcommands: [HeraldCommand.self, RedisCommand.self]
    )
}

/// The options both sides share, so they build the same workload.
struct WorkloadOptions: ParsableArguments {
    @Option(help: "Drivers in the index.") var drivers = 1_000_000
    @Option(help: "Distinct query points.") var queries = 10_000
    @Option(help: "Seed for drivers, ids, queries and moves.") var seed: UInt64 = 1
    @Option(help: "Query radius in metres.") var radius = 3_000.0
    @Option(help: "Results per query.") var limit = 20

    func workload() -> Workload {
        Workload(drivers: drivers, queries: queries, seed: seed)
    }
}
