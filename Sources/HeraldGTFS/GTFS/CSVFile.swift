/// One CSV file of a GTFS feed (RFC 4180 as GTFS uses it), read record by record without
/// copying fields.
///
/// Why our own reader: a feed's `stop_times.txt` has hundreds of thousands of rows, and the
/// libraries in the package mirror (SwiftCSV, CSV.swift) build a `String` (SwiftCSV a
/// dictionary) per field; measured on Halifax's stop_times they were 9–25× slower than this
/// reader, which hands out byte ranges and parses numbers and times in place (see
/// BENCHMARKS.md, "CSV"). It accepts what real feeds contain: a UTF-8 byte-order mark, LF or
/// CRLF line ends, quoted fields with `""` escapes and line breaks, blank lines, and spaces
/// around unquoted values (trimmed, and reported).
public struct CSVFile: Sendable {
    public let name: String
    /// The header's column names (trimmed, without a byte-order mark).
    public let columns: [String]
    let bytes: [UInt8]
    let bodyStart: Int
    /// Line number of the first record (the header is line 1).
    let bodyLine: Int

    /// Reads the header; fails only when the file has none.
    public init(name: String, bytes: [UInt8]) throws(CSVError) {
        self.name = name
        self.bytes = bytes
        var start = 0
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { start = 3 }
        var header: [String] = []
        var position = start
        var line = 1
        // Skip blank lines before the header.
        while position < bytes.count, bytes[position] == CSVByte.lf || bytes[position] == CSVByte.cr {
            if bytes[position] == CSVByte.lf { line += 1 }
            position += 1
        }
        guard position < bytes.count else { throw CSVError.emptyFile(name) }
        let parsed = bytes.withUnsafeBufferPointer { buffer -> (Int, Int, [String])? in
            var scanner = CSVScanner(buffer: buffer, position: position, line: line, capacity: 64)
            guard scanner.nextRecord() else { return nil }
            if scanner.failure != nil { return nil }
            var names: [String] = []
            for field in 0..<scanner.fieldCount { names.append(scanner.string(field)) }
            return (scanner.position, scanner.line, names)
        }
        guard let (bodyStart, bodyLine, names) = parsed else { throw CSVError.unreadableHeader(name) }
        header = names
        self.columns = header
        self.bodyStart = bodyStart
        self.bodyLine = bodyLine
    }

    /// The index of column `name`, if the header has it.
    public func column(_ name: String) -> Int? {
        columns.firstIndex(of: name)
    }

    /// Calls `body` with each record in order. The record is only valid inside `body`.
    /// Blank lines are skipped and counted in `blankLines`; a quote left open at the end of
    /// the file stops the reading with `CSVError.unterminatedQuote`.
    @discardableResult
    public func forEachRecord(_ body: (borrowing CSVRecord) throws -> Void) throws -> CSVReadSummary {
        var summary = CSVReadSummary()
        let capacity = max(columns.count, 1) + 8
        try bytes.withUnsafeBufferPointer { buffer in
            var scanner = CSVScanner(buffer: buffer, position: bodyStart, line: bodyLine, capacity: capacity)
            while scanner.nextRecord() {
                if let failure = scanner.failure { throw failure.error(file: name) }
                if scanner.fieldCount == 1 && scanner.fieldIsEmpty(0) {
                    summary.blankLines += 1
                    if summary.firstBlankLine == nil { summary.firstBlankLine = scanner.recordLine }
                    continue
                }
                if scanner.trimmedFields > 0 {
                    summary.trimmedValues += scanner.trimmedFields
                    if summary.firstTrimmedLine == nil { summary.firstTrimmedLine = scanner.recordLine }
                }
                summary.records += 1
                try body(CSVRecord(scanner: scanner))
            }
            if let failure = scanner.failure { throw failure.error(file: name) }
        }
        return summary
    }
}

/// What reading a file found besides its records.
public struct CSVReadSummary: Sendable, Equatable {
    public var records = 0
    public var blankLines = 0
    public var firstBlankLine: Int?
    /// Unquoted values that had spaces or tabs around them (trimmed).
    public var trimmedValues = 0
    public var firstTrimmedLine: Int?
}

public enum CSVError: Error, Equatable, Sendable {
    case emptyFile(String)
    case unreadableHeader(String)
    case unterminatedQuote(file: String, line: Int)
    case textAfterQuote(file: String, line: Int)
    case fieldTooLong(file: String, line: Int, limit: Int)
}

enum CSVByte {
    static let comma = UInt8(ascii: ",")
    static let quote = UInt8(ascii: "\"")
    static let lf = UInt8(ascii: "\n")
    static let cr = UInt8(ascii: "\r")
    static let space = UInt8(ascii: " ")
    static let tab = UInt8(ascii: "\t")
}

/// One record of a `CSVFile`, valid only inside `forEachRecord`'s closure. Fields are
/// addressed by column index; a column the record does not reach reads as empty.
public struct CSVRecord: ~Copyable {
    let scanner: CSVScanner

    init(scanner: CSVScanner) {
        self.scanner = scanner
    }

    /// The line the record starts on (1-based; the header is line 1).
    public var line: Int { scanner.recordLine }
    /// How many fields the record has (it may differ from the header: `invalid_row_length`).
    public var fieldCount: Int { scanner.fieldCount }

    public func isEmpty(_ field: Int) -> Bool {
        field >= scanner.fieldCount || scanner.fieldIsEmpty(field)
    }

    /// The field's text (empty when absent).
    public func string(_ field: Int) -> String {
        field < scanner.fieldCount ? scanner.string(field) : ""
    }

    /// The field's text, or nil when it is empty or absent.
    public func optionalString(_ field: Int?) -> String? {
        guard let field, !isEmpty(field) else { return nil }
        return scanner.string(field)
    }

    /// The raw bytes of an unescaped field (quotes removed, no `""` handling).
    public func withBytes<T>(_ field: Int, _ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
        guard field < scanner.fieldCount else { return try body(UnsafeBufferPointer(start: nil, count: 0)) }
        return try body(scanner.fieldBytes(field))
    }

    /// A whole number (`-12`, `+3`, `007`), or nil when the field is not one.
    public func integer(_ field: Int) -> Int? {
        withBytes(field) { GTFSValueParser.integer($0) }
    }

    /// A decimal number (`-33.8688`, `1e3`), or nil when the field is not one.
    public func double(_ field: Int) -> Double? {
        withBytes(field) { GTFSValueParser.double($0) }
    }

    /// A GTFS time (`H:MM:SS`, hours may pass 24) in seconds, or nil when not one.
    public func time(_ field: Int) -> Int32? {
        withBytes(field) { GTFSValueParser.time($0) }
    }

    /// A GTFS date (`YYYYMMDD`) as days since 1970-01-01, or nil when not a real date.
    public func date(_ field: Int) -> Int32? {
        withBytes(field) { GTFSValueParser.date($0) }
    }
}

/// The state machine behind `CSVFile`: finds the fields of one record at a time.
struct CSVScanner {
    struct Failure {
        var kind: Kind
        var line: Int
        enum Kind { case unterminatedQuote, textAfterQuote, fieldTooLong }
        func error(file: String) -> CSVError {
            switch kind {
            case .unterminatedQuote: .unterminatedQuote(file: file, line: line)
            case .textAfterQuote: .textAfterQuote(file: file, line: line)
            case .fieldTooLong: .fieldTooLong(file: file, line: line, limit: CSVScanner.maxFieldBytes)
            }
        }
    }

    /// The longest value a feed may hold (16 KiB): GTFS names and descriptions are far
    /// shorter, and a value is served to anonymous callers as often as they ask, so one of
    /// 64 MB in `stop_name` would be 64 MB an answer. A longer one refuses the file.
    static let maxFieldBytes = 16 * 1024

    let buffer: UnsafeBufferPointer<UInt8>
    var position: Int
    var line: Int
    var recordLine = 0
    var fieldCount = 0
    var trimmedFields = 0
    var failure: Failure?
    /// Start and end offsets of each field; a field holding `""` escapes is flagged.
    var starts: [Int]
    var ends: [Int]
    var escaped: [Bool]

    init(buffer: UnsafeBufferPointer<UInt8>, position: Int, line: Int, capacity: Int) {
        self.buffer = buffer
        self.position = position
        self.line = line
        starts = Array(repeating: 0, count: capacity)
        ends = Array(repeating: 0, count: capacity)
        escaped = Array(repeating: false, count: capacity)
    }

    mutating func store(_ start: Int, _ end: Int, _ hasEscapes: Bool) {
        if end - start > Self.maxFieldBytes, failure == nil {
            failure = Failure(kind: .fieldTooLong, line: recordLine)
        }
        if fieldCount == starts.count {
            starts.append(0)
            ends.append(0)
            escaped.append(false)
        }
        starts[fieldCount] = start
        ends[fieldCount] = end
        escaped[fieldCount] = hasEscapes
        fieldCount += 1
    }

    /// Reads the next record; false at the end of the input (or after a failure).
    mutating func nextRecord() -> Bool {
        let count = buffer.count
        guard failure == nil, position < count else { return false }
        fieldCount = 0
        trimmedFields = 0
        recordLine = line
        var i = position
        while true {
            if i < count && buffer[i] == CSVByte.quote {
                i += 1
                let start = i
                var hasEscapes = false
                var closed = false
                while i < count {
                    let byte = buffer[i]
                    if byte == CSVByte.quote {
                        if i + 1 < count && buffer[i + 1] == CSVByte.quote {
                            hasEscapes = true
                            i += 2
                            continue
                        }
                        closed = true
                        break
                    }
                    if byte == CSVByte.lf { line += 1 }
                    i += 1
                }
                guard closed else {
                    failure = Failure(kind: .unterminatedQuote, line: recordLine)
                    position = count
                    return true
                }
                store(start, i, hasEscapes)
                i += 1
                // Only spaces may follow a closing quote before the delimiter.
                while i < count && (buffer[i] == CSVByte.space || buffer[i] == CSVByte.tab) { i += 1 }
                if i < count && buffer[i] != CSVByte.comma && buffer[i] != CSVByte.lf && buffer[i] != CSVByte.cr {
                    failure = Failure(kind: .textAfterQuote, line: line)
                    position = count
                    return true
                }
            } else {
                var start = i
                while i < count {
                    let byte = buffer[i]
                    if byte == CSVByte.comma || byte == CSVByte.lf || byte == CSVByte.cr { break }
                    i += 1
                }
                var end = i
                if start < end && (buffer[start] <= CSVByte.space || buffer[end - 1] <= CSVByte.space) {
                    let before = end - start
                    while start < end && (buffer[start] == CSVByte.space || buffer[start] == CSVByte.tab) { start += 1 }
                    while end > start && (buffer[end - 1] == CSVByte.space || buffer[end - 1] == CSVByte.tab) { end -= 1 }
                    if end - start != before { trimmedFields += 1 }
                }
                store(start, end, false)
            }
            if i < count && buffer[i] == CSVByte.comma {
                i += 1
                continue
            }
            // End of the record: CR, LF, CRLF or the end of the input.
            if i < count && buffer[i] == CSVByte.cr { i += 1 }
            if i < count && buffer[i] == CSVByte.lf { i += 1 }
            line += 1
            break
        }
        position = i
        return true
    }

    func fieldIsEmpty(_ field: Int) -> Bool {
        starts[field] == ends[field]
    }

    func fieldBytes(_ field: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(rebasing: buffer[starts[field]..<ends[field]])
    }

    func string(_ field: Int) -> String {
        let bytes = fieldBytes(field)
        guard escaped[field] else { return String(decoding: bytes, as: UTF8.self) }
        var unescaped: [UInt8] = []
        unescaped.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            unescaped.append(bytes[i])
            if bytes[i] == CSVByte.quote && i + 1 < bytes.count && bytes[i + 1] == CSVByte.quote { i += 1 }
            i += 1
        }
        return String(decoding: unescaped, as: UTF8.self)
    }
}
