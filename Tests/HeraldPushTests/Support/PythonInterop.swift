import Foundation
import Testing

/// Runs a Python snippet with the test venv's interpreter (`HERALD_TEST_PYTHON`, set by
/// scripts/test), so checks are made by libraries nobody here wrote (PyJWT, http_ece).
enum PythonInterop {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Runs `script` with `arguments` (as sys.argv[1:]); returns stdout, throws with stderr.
    static func run(_ script: String, arguments: [String] = []) throws -> String {
        guard let python = ProcessInfo.processInfo.environment["HERALD_TEST_PYTHON"], !python.isEmpty else {
            throw Failure(description: "HERALD_TEST_PYTHON is not set: run the suite through scripts/test, which creates .venv-test with PyJWT and http_ece")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "python failed (\(process.terminationStatus)): \(String(decoding: errors, as: UTF8.self))")
        }
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
