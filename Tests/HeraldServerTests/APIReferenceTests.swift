import Foundation
import Testing

@testable import HeraldServer

/// `docs/api-reference.md` is the rendering of the operations the server answers: when a
/// route, a field or an error changes, the committed page must be regenerated
/// (`HERALD_WRITE_API_REFERENCE=1 swift test --filter APIReferenceTests`).
@Suite struct APIReferenceTests {
    static var pagePath: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/api-reference.md").path
    }

    @Test func theCommittedReferenceIsTheOperationsRendered() throws {
        let rendered = APIReference.markdown(HeraldRuntime.operations(HeraldConfig()))
        if ProcessInfo.processInfo.environment["HERALD_WRITE_API_REFERENCE"] == "1" {
            try rendered.write(toFile: Self.pagePath, atomically: true, encoding: .utf8)
        }
        let committed = try String(contentsOfFile: Self.pagePath, encoding: .utf8)
        #expect(
            committed == rendered, "docs/api-reference.md is out of date: regenerate it with HERALD_WRITE_API_REFERENCE=1 swift test --filter APIReferenceTests"
        )
        // Every operation is in it.
        for operation in HeraldRuntime.operations(HeraldConfig()) {
            #expect(committed.contains("| \(operation.method) | `\(operation.path)`"), "\(operation.method) \(operation.path)")
        }
    }
}
