import Testing

@testable import HeraldGTFS

@Suite struct CSVFileTests {
    func rows(_ text: String) throws -> ([String], [[String]], CSVReadSummary) {
        let file = try CSVFile(name: "t.txt", bytes: Array(text.utf8))
        var rows: [[String]] = []
        let summary = try file.forEachRecord { record in
            rows.append((0..<record.fieldCount).map { record.string($0) })
        }
        return (file.columns, rows, summary)
    }

    @Test func readsPlainRowsWithCRLFAndBOM() throws {
        let (columns, rows, summary) = try rows("\u{FEFF}a,b,c\r\n1,2,3\r\n4,5,6")
        #expect(columns == ["a", "b", "c"])
        #expect(rows == [["1", "2", "3"], ["4", "5", "6"]])
        #expect(summary.records == 2)
    }

    @Test func quotedFieldsKeepCommasNewlinesAndEscapedQuotes() throws {
        let (_, rows, _) = try rows("a,b\n\"x, y\",\"say \"\"hi\"\"\"\n\"two\nlines\",z\n")
        #expect(rows == [["x, y", "say \"hi\""], ["two\nlines", "z"]])
    }

    @Test func trailingEmptyFieldsAndBlankLines() throws {
        let (_, rows, summary) = try rows("a,b,c\n1,,\n\n2,3,\n\n")
        #expect(rows == [["1", "", ""], ["2", "3", ""]])
        #expect(summary.blankLines == 2)
        #expect(summary.firstBlankLine == 3)
    }

    @Test func trimsSpacesAroundUnquotedValuesAndCountsThem() throws {
        let (_, rows, summary) = try rows("t,u\n 5:49:00 ,x\n\" kept \",y\n")
        #expect(rows == [["5:49:00", "x"], [" kept ", "y"]])
        #expect(summary.trimmedValues == 1)
        #expect(summary.firstTrimmedLine == 2)
    }

    @Test func recordsKnowTheirLineAcrossQuotedNewlines() throws {
        let file = try CSVFile(name: "t.txt", bytes: Array("a,b\n\"1\n2\",x\ny,z\n".utf8))
        var lines: [Int] = []
        try file.forEachRecord { lines.append($0.line) }
        #expect(lines == [2, 4])
    }

    @Test func anUnterminatedQuoteIsAnError() throws {
        let file = try CSVFile(name: "t.txt", bytes: Array("a,b\n1,\"open\n2,3\n".utf8))
        #expect(throws: CSVError.unterminatedQuote(file: "t.txt", line: 2)) { try file.forEachRecord { _ in } }
        let after = try CSVFile(name: "t.txt", bytes: Array("a,b\n\"x\"y,2\n".utf8))
        #expect(throws: CSVError.textAfterQuote(file: "t.txt", line: 2)) { try after.forEachRecord { _ in } }
    }

    @Test func anEmptyFileHasNoHeader() {
        #expect(throws: CSVError.emptyFile("e.txt")) { try CSVFile(name: "e.txt", bytes: Array("\n\n".utf8)) }
    }

    @Test func parsesFieldsInPlace() throws {
        let file = try CSVFile(name: "t.txt", bytes: Array("t,d,n,i\n25:35:00,20260308,-33.8839,+42\n".utf8))
        try file.forEachRecord { record in
            #expect(record.time(0) == Int32(25 * 3600 + 35 * 60))
            #expect(record.date(1) == ServiceDate.days(year: 2026, month: 3, day: 8))
            #expect(record.double(2) == -33.8839)
            #expect(record.integer(3) == 42)
            let absent = record.isEmpty(7)
            #expect(absent)
        }
    }
}

@Suite struct GTFSValueParserTests {
    func time(_ text: String) -> Int32? { Array(text.utf8).withUnsafeBufferPointer { GTFSValueParser.time($0) } }
    func date(_ text: String) -> Int32? { Array(text.utf8).withUnsafeBufferPointer { GTFSValueParser.date($0) } }
    func double(_ text: String) -> Double? { Array(text.utf8).withUnsafeBufferPointer { GTFSValueParser.double($0) } }
    func integer(_ text: String) -> Int? { Array(text.utf8).withUnsafeBufferPointer { GTFSValueParser.integer($0) } }

    @Test func times() {
        #expect(time("5:49:00") == Int32(5 * 3600 + 49 * 60))
        #expect(time("05:49:00") == Int32(5 * 3600 + 49 * 60))
        #expect(time("29:39:00") == Int32(29 * 3600 + 39 * 60))
        #expect(time("123:00:00") == Int32(123 * 3600))
        for bad in ["5:60:00", "5:00:60", "5:5:00", "ab:00:00", "", "5:00", "05:00:00:00", " 5:00:00"] {
            #expect(time(bad) == nil, "\(bad)")
        }
    }

    @Test func dates() {
        #expect(date("20240229") == ServiceDate.days(year: 2024, month: 2, day: 29))
        for bad in ["20230229", "2024-02-29", "20241301", "2024022", "202402299"] {
            #expect(date(bad) == nil, "\(bad)")
        }
    }

    @Test func numbers() {
        #expect(double("151.2072") == 151.2072)
        #expect(double("-0.5") == -0.5)
        #expect(double(".5") == 0.5)
        #expect(double("1e3") == 1000)
        #expect(double("36.4252880000000001234") == 36.4252880000000001234)
        for bad in ["", "-", ".", "1.2.3", "abc", "1,5", "nan", "inf"] {
            #expect(double(bad) == nil, "\(bad)")
        }
        #expect(integer("-12") == -12)
        for bad in ["", "1.0", "1e3", "+", "12a"] {
            #expect(integer(bad) == nil, "\(bad)")
        }
        // Every decimal with up to 7 places parses exactly as Swift's own parser does.
        for value in stride(from: -180.0, through: 180.0, by: 0.0137) {
            let text = String(format: "%.7f", value)
            #expect(double(text) == Double(text))
        }
    }
}
