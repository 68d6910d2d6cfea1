/// What an import found wrong with a feed, in the canonical GTFS validator's terms
/// (MobilityData gtfs-validator notice codes and severities).
///
/// Why its severities: operators already read that validator's reports, and its `ERROR`
/// notices are exactly the ones that make a feed wrong to serve (a stop time that points
/// at no stop, a time that does not parse, a duplicate id). Herald refuses a feed with any
/// error and keeps the version it serves; warnings and infos are reported and the feed is
/// used. Each code keeps its first `samplesPerCode` occurrences with file, line, field and
/// value, and counts the rest, so a feed with 77,000 padded times gives one readable entry.
public struct FeedReport: Sendable, Equatable {
    public enum Severity: String, Sendable, Codable, Comparable {
        case info = "INFO"
        case warning = "WARNING"
        case error = "ERROR"

        var rank: Int {
            switch self {
            case .info: 0
            case .warning: 1
            case .error: 2
            }
        }
        public static func < (a: Severity, b: Severity) -> Bool { a.rank < b.rank }
    }

    /// One occurrence: where and what.
    public struct Sample: Sendable, Equatable, Codable {
        public var file: String?
        /// The line in the file (the header is line 1).
        public var line: Int?
        public var field: String?
        public var value: String?
        public var message: String

        public init(file: String? = nil, line: Int? = nil, field: String? = nil, value: String? = nil, message: String) {
            self.file = file
            self.line = line
            self.field = field
            self.value = value.map { $0.count > 120 ? String($0.prefix(120)) + "…" : $0 }
            self.message = message
        }
    }

    /// All occurrences of one code.
    public struct Notice: Sendable, Equatable, Codable {
        public var code: String
        public var severity: Severity
        public var count: Int
        public var samples: [Sample]
    }

    public static let samplesPerCode = 20

    public private(set) var notices: [Notice] = []
    private var positions: [String: Int] = [:]

    public init() {}

    public mutating func add(_ code: String, _ severity: Severity, _ sample: Sample) {
        add(code, severity, count: 1, sample)
    }

    /// Records `count` occurrences described by one sample (used for per-file summaries).
    public mutating func add(_ code: String, _ severity: Severity, count: Int, _ sample: Sample) {
        if let position = positions[code] {
            notices[position].count += count
            if notices[position].samples.count < Self.samplesPerCode { notices[position].samples.append(sample) }
        } else {
            positions[code] = notices.count
            notices.append(Notice(code: code, severity: severity, count: count, samples: [sample]))
        }
    }

    public mutating func error(_ code: String, _ sample: Sample) { add(code, .error, sample) }
    public mutating func warning(_ code: String, _ sample: Sample) { add(code, .warning, sample) }
    public mutating func info(_ code: String, _ sample: Sample) { add(code, .info, sample) }

    public var hasErrors: Bool { notices.contains { $0.severity == .error } }
    public var errorCount: Int { notices.filter { $0.severity == .error }.reduce(0) { $0 + $1.count } }
    public var warningCount: Int { notices.filter { $0.severity == .warning }.reduce(0) { $0 + $1.count } }

    public func count(_ code: String) -> Int {
        positions[code].map { notices[$0].count } ?? 0
    }

    /// Errors first, then warnings, then infos; by code within a severity.
    public var sorted: [Notice] {
        notices.sorted { ($0.severity.rank, $1.code) > ($1.severity.rank, $0.code) }
    }

    public static func == (a: FeedReport, b: FeedReport) -> Bool { a.notices == b.notices }
}
