import Foundation
import HeraldMockProviders
import Testing

/// Runs a Python snippet with the test venv's interpreter (`HERALD_TEST_PYTHON`, set by
/// scripts/test), so checks are made by libraries nobody here wrote (PyJWT, http_ece).
enum PythonInterop {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `script` with `arguments` (as sys.argv[1:]); returns stdout, throws with stderr.
    static func run(_ script: String, arguments: [String] = []) async throws -> String {
        guard let python = ProcessInfo.processInfo.environment["HERALD_TEST_PYTHON"], !python.isEmpty else {
            throw Failure(description: "HERALD_TEST_PYTHON is not set: run the suite through scripts/test, which creates .venv-test with PyJWT and http_ece")
        }
        let finished = try await ChildProcess.run(python, ["-c", script] + arguments)
        guard finished.status == 0 else {
            throw Failure(description: "python failed (\(finished.status)): \(finished.errorText)")
        }
        return finished.outputText.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
