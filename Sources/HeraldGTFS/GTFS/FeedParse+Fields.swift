/// Field readers that report what they cannot use: each names the file, line, column and
/// value, with the canonical validator's code.
extension FeedParse {
    func text(_ record: borrowing CSVRecord, _ map: ColumnMap, _ column: String) -> String? {
        record.optionalString(map[column])
    }

    func requiredText(_ record: borrowing CSVRecord, _ map: ColumnMap, _ column: String) -> String? {
        if let value = record.optionalString(map[column]) { return value }
        report.error("missing_required_field", .init(file: map.file.name, line: record.line, field: column, message: "\(column) is required"))
        return nil
    }

    func missing(_ record: borrowing CSVRecord, _ map: ColumnMap, _ column: String, _ message: String) {
        report.error("missing_required_field", .init(file: map.file.name, line: record.line, field: column, message: message))
    }

    /// A whole number in `range`; nil (and reported) when it is not, or when it is required and empty.
    func integer(_ record: borrowing CSVRecord, _ map: ColumnMap, _ column: String, _ range: ClosedRange<Int>, required: Bool = false) -> Int? {
        guard let index = map[column], !record.isEmpty(index) else {
            if required { missing(record, map, column, "\(column) is required") }
            return nil
        }
        guard let value = record.integer(index) else {
            report.error(
                "invalid_integer", .init(file: map.file.name, line: record.line, field: column, value: record.string(index), message: "not a whole number"))
            return nil
        }
        guard range.contains(value) else {
            report.error(
                "number_out_of_range",
                .init(
                    file: map.file.name, line: record.line, field: column, value: record.string(index),
                    message: "must be from \(range.lowerBound) to \(range.upperBound)"))
            return nil
        }
        return value
    }

    /// An enumerated value: an unknown one is a warning (`unexpected_enum_value`) and reads
    /// as `fallback`, as the validator treats it.
    func enumeration(_ record: borrowing CSVRecord, _ map: ColumnMap, _ column: String, _ allowed: ClosedRange<Int>, fallback: Int, required: Bool = false)
        -> Int
    {
        guard let index = map[column], !record.isEmpty(index) else {
            if required { missing(record, map, column, "\(column) is required") }
            return fallback
        }
        guard let value = record.integer(index) else {
            report.error(
                "invalid_integer", .init(file: map.file.name, line: record.line, field: column, value: record.string(index), message: "not a whole number"))
            return fallback
        }
        guard allowed.contains(value) else {
            if checking {
                report.warning(
                    "unexpected_enum_value",
                    .init(
                        file: map.file.name, line: record.line, field: column, value: record.string(index),
                        message: "expected \(allowed.lowerBound)–\(allowed.upperBound)"))
            }
            return fallback
        }
        return value
    }

    func decimal(_ record: borrowing CSVRecord, _ map: ColumnMap, _ column: String, _ range: ClosedRange<Double>? = nil, required: Bool = false) -> Double? {
        guard let index = map[column], !record.isEmpty(index) else {
            if required { missing(record, map, column, "\(column) is required") }
            return nil
        }
        guard let value = record.double(index) else {
            report.error("invalid_float", .init(file: map.file.name, line: record.line, field: column, value: record.string(index), message: "not a number"))
            return nil
        }
        if let range, !range.contains(value) {
            report.error(
                "number_out_of_range",
                .init(
                    file: map.file.name, line: record.line, field: column, value: record.string(index),
                    message: "must be from \(range.lowerBound) to \(range.upperBound)"))
            return nil
        }
        return value
    }

    /// A time; `.missing` when empty, `.invalid` (reported) when it does not parse.
    func time(_ record: borrowing CSVRecord, _ map: ColumnMap, _ column: String) -> FieldTime {
        guard let index = map[column], !record.isEmpty(index) else { return .missing }
        guard let value = record.time(index) else {
            report.error(
                "invalid_time", .init(file: map.file.name, line: record.line, field: column, value: record.string(index), message: "not a time H:MM:SS"))
            return .invalid
        }
        return .value(value)
    }

    func date(_ record: borrowing CSVRecord, _ map: ColumnMap, _ column: String, required: Bool = false) -> Int32? {
        guard let index = map[column], !record.isEmpty(index) else {
            if required { missing(record, map, column, "\(column) is required") }
            return nil
        }
        guard let value = record.date(index) else {
            report.error(
                "invalid_date", .init(file: map.file.name, line: record.line, field: column, value: record.string(index), message: "not a date YYYYMMDD"))
            return nil
        }
        return value
    }

    /// A six-digit hex colour (`F99D1C`), upper-cased.
    func color(_ record: borrowing CSVRecord, _ map: ColumnMap, _ column: String) -> String? {
        guard let value = text(record, map, column) else { return nil }
        guard value.utf8.count == 6, value.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || ($0 | 0x20 >= 97 && $0 | 0x20 <= 102) }) else {
            report.error("invalid_color", .init(file: map.file.name, line: record.line, field: column, value: value, message: "not a six-digit hex colour"))
            return nil
        }
        return value.uppercased()
    }

    func duplicate(_ record: borrowing CSVRecord, _ map: ColumnMap, _ column: String, _ value: String) {
        report.error("duplicate_key", .init(file: map.file.name, line: record.line, field: column, value: value, message: "the id appears more than once"))
    }

    func dangling(_ record: borrowing CSVRecord, _ map: ColumnMap, _ column: String, _ value: String, _ target: String) {
        report.error(
            "foreign_key_violation",
            .init(file: map.file.name, line: record.line, field: column, value: value, message: "no \(target) has this id"))
    }
}

/// A time field: absent, present, or present but unreadable (already reported).
enum FieldTime {
    case missing
    case invalid
    case value(Int32)

    var seconds: Int32? {
        if case .value(let v) = self { return v }
        return nil
    }
}
