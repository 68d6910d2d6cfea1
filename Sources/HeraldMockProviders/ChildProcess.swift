import Foundation

/// Runs a command to its end on a Dispatch thread, never on Swift's cooperative pool.
///
/// Tests and mock servers call openssl and python. `Process.waitUntilExit()` and a pipe read
/// block the thread they run on; on a two-core machine the cooperative pool has two threads,
/// so one blocked wait stalled every other test's tasks and their timers overshot by seconds
/// (a 50 ms deadline fired after 25 s). Output goes to files, so neither stream can fill a
/// pipe and wedge the child.
public enum ChildProcess {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public struct Finished: Sendable {
        public let status: Int32
        public let output: Data
        public let errors: Data
        public var outputText: String { String(decoding: output, as: UTF8.self) }
        public var errorText: String { String(decoding: errors, as: UTF8.self) }
    }

    /// Runs `executable` (a path, or a name looked up through /usr/bin/env) with `arguments`,
    /// feeding `input` on its standard input.
    public static func run(_ executable: String, _ arguments: [String], input: Data = Data()) async throws -> Finished {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try runBlocking(executable, arguments, input: input) })
            }
        }
    }

    private static func runBlocking(_ executable: String, _ arguments: [String], input: Data) throws -> Finished {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("herald-child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let inputFile = directory.appendingPathComponent("in")
        let outputFile = directory.appendingPathComponent("out")
        let errorFile = directory.appendingPathComponent("err")
        try input.write(to: inputFile)
        try Data().write(to: outputFile)
        try Data().write(to: errorFile)

        let process = Process()
        if executable.hasPrefix("/") {
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
        }
        let stdin = try FileHandle(forReadingFrom: inputFile)
        let stdout = try FileHandle(forWritingTo: outputFile)
        let stderr = try FileHandle(forWritingTo: errorFile)
        defer {
            try? stdin.close()
            try? stdout.close()
            try? stderr.close()
        }
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        process.waitUntilExit()
        return Finished(
            status: process.terminationStatus, output: try Data(contentsOf: outputFile), errors: try Data(contentsOf: errorFile))
    }
}
