import Foundation
import HeraldStorage
import HeraldTestSupport
import SQLKit
import Testing

@Suite struct BulkInsertTests {
    /// Values COPY's text format must escape (tab, newline, CR, backslash), NULLs, Unicode and
    /// numbers come back as written, on both engines, across batches.
    @Test(arguments: TestEngine.allCases)
    func rowsComeBackExactly(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await database.withConnection { db in
                try await db.raw("CREATE TABLE bulk_probe (id INTEGER NOT NULL, name TEXT, score DOUBLE PRECISION)").run()
            }
            let awkward = ["tab\there", "line\nbreak", "cr\rreturn", "back\\slash \\N", "Zürich – 東京 🚋", "", "\"quoted\", comma"]
            var rows = BulkRows(table: "bulk_probe", columns: ["id", "name", "score"])
            for index in 0..<2_500 {
                rows.append(.integer(Int64(index)), index % 11 == 0 ? .null : .text(awkward[index % awkward.count]), .double(Double(index) / 8))
            }
            try await database.bulkInsert(rows)
            let read = try await database.withConnection { db in
                try await db.raw("SELECT id, name, score FROM bulk_probe ORDER BY id").all().map {
                    (
                        try $0.decode(column: "id", as: Int.self), try $0.decode(column: "name", as: String?.self),
                        try $0.decode(column: "score", as: Double.self)
                    )
                }
            }
            #expect(read.count == 2_500)
            for (index, row) in read.enumerated() {
                #expect(row.0 == index)
                #expect(row.1 == (index % 11 == 0 ? nil : awkward[index % awkward.count]))
                #expect(row.2 == Double(index) / 8)
            }
        }
    }
}
