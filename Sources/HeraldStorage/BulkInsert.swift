import Logging
import NIOCore
import PostgresNIO
import SQLKit

/// One value of a bulk-inserted row.
public enum BulkValue: Sendable, Equatable, Encodable {
    case null
    case integer(Int64)
    case double(Double)
    case text(String)

    public static func text(_ value: String?) -> BulkValue { value.map { .text($0) } ?? .null }
    public static func integer(_ value: Int?) -> BulkValue { value.map { .integer(Int64($0)) } ?? .null }
    public static func integer(_ value: Int64?) -> BulkValue { value.map { .integer($0) } ?? .null }
    public static func double(_ value: Double?) -> BulkValue { value.map { .double($0) } ?? .null }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .text(let value): try container.encode(value)
        }
    }
}

/// Rows for one table, stored flat (one array for the whole batch, not one per row).
public struct BulkRows: Sendable {
    public let table: String
    public let columns: [String]
    public private(set) var values: [BulkValue] = []

    /// `table` and `columns` are SQL identifiers written by the caller, never user input.
    public init(table: String, columns: [String], capacity: Int = 0) {
        self.table = table
        self.columns = columns
        values.reserveCapacity(capacity * columns.count)
    }

    /// Appends one row; it must have a value per column.
    public mutating func append(_ row: BulkValue...) {
        append(row: row)
    }

    public mutating func append(row: [BulkValue]) {
        precondition(row.count == columns.count, "\(table): a row needs \(columns.count) values")
        values.append(contentsOf: row)
    }

    public var rowCount: Int { values.count / columns.count }
    public var isEmpty: Bool { values.isEmpty }

    public mutating func removeAll() {
        values.removeAll(keepingCapacity: true)
    }
}

extension Database {
    /// Appends `rows` as fast as the engine allows: PostgreSQL streams them with
    /// `COPY … FROM STDIN`, SQLite runs multi-row `INSERT`s in one transaction. A failure
    /// leaves this call's rows out; earlier calls are not undone (write rows under a key
    /// nothing reads until they are complete, as the transit import does).
    public func bulkInsert(_ rows: BulkRows) async throws {
        guard !rows.isEmpty else { return }
        if let postgres = self as? PostgresDatabase {
            try await postgres.copy(rows)
        } else {
            try await insertInBatches(rows)
        }
    }

    func insertInBatches(_ rows: BulkRows) async throws {
        try await transaction { db in try await db.insertRows(rows) }
    }
}

extension SQLDatabase {
    /// Appends `rows` with multi-row `INSERT`s through this connection, inside the caller's
    /// transaction (so they commit with the rest of it): a few statements for thousands of
    /// rows where one `INSERT` a row costs a round trip each. `onConflict` (an `ON CONFLICT …`
    /// clause written by the caller, never user input) makes each statement an upsert.
    public func insertRows(_ rows: BulkRows, onConflict: String? = nil) async throws {
        guard !rows.isEmpty else { return }
        let width = rows.columns.count
        // SQLite allows 32,766 bound values per statement.
        let perStatement = max(1, min(1000, 32_000 / width))
        let head = "INSERT INTO \(rows.table) (\(rows.columns.joined(separator: ", "))) VALUES "
        var start = 0
        let count = rows.rowCount
        while start < count {
            let end = min(count, start + perStatement)
            var query = SQLQueryString(stringLiteral: head)
            for row in start..<end {
                query.appendInterpolation(unsafeRaw: row == start ? "(" : ", (")
                for column in 0..<width {
                    if column > 0 { query.appendInterpolation(unsafeRaw: ", ") }
                    query.appendInterpolation(bind: rows.values[row * width + column])
                }
                query.appendInterpolation(unsafeRaw: ")")
            }
            if let onConflict { query.appendInterpolation(unsafeRaw: " \(onConflict)") }
            try await raw(query).run()
            start = end
        }
    }
}

extension PostgresDatabase {
    /// COPY's text format: tab-separated, `\N` for NULL, backslash escapes.
    func copy(_ rows: BulkRows) async throws {
        let logger = Logger(label: "herald.bulk")
        try await client.withConnection { connection in
            try await connection.copyFrom(table: rows.table, columns: rows.columns, logger: logger) { writer in
                var buffer = ByteBuffer()
                buffer.reserveCapacity(1 << 20)
                let width = rows.columns.count
                for (index, value) in rows.values.enumerated() {
                    switch value {
                    case .null: buffer.writeStaticString("\\N")
                    case .integer(let number): buffer.writeString(String(number))
                    case .double(let number): buffer.writeString(number.isFinite ? "\(number)" : "\\N")
                    case .text(let text): Self.writeEscaped(text, into: &buffer)
                    }
                    buffer.writeInteger(index % width == width - 1 ? UInt8(ascii: "\n") : UInt8(ascii: "\t"))
                    if buffer.readableBytes >= 1 << 20 {
                        try await writer.write(buffer)
                        buffer.clear()
                    }
                }
                if buffer.readableBytes > 0 { try await writer.write(buffer) }
            }
        }
    }

    static func writeEscaped(_ text: String, into buffer: inout ByteBuffer) {
        var needsEscape = false
        for byte in text.utf8 where byte == UInt8(ascii: "\\") || byte == 9 || byte == 10 || byte == 13 {
            needsEscape = true
            break
        }
        guard needsEscape else {
            buffer.writeString(text)
            return
        }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\\"): buffer.writeStaticString("\\\\")
            case 9: buffer.writeStaticString("\\t")
            case 10: buffer.writeStaticString("\\n")
            case 13: buffer.writeStaticString("\\r")
            default: buffer.writeInteger(byte)
            }
        }
    }
}
