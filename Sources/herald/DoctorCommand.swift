import ArgumentParser
import Foundation
import HeraldServer
import Logging

/// `herald doctor [--dry-run]`: one line per check, `FAIL` lines first to fix; exits 1 when any
/// check failed (a deploy script can stop there).
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check the configuration, the database and each push provider's credentials; print what is wrong, one line each.",
        discussion: """
            Push credentials are checked against the provider's real endpoint with a push to a made-up device \
            token (the provider checks the credentials first; no device gets anything). --dry-run checks the \
            key files and signing only, without contacting anyone. Nothing is written to the database.
            """)

    @OptionGroup var common: CommonOptions

    @Flag(name: .customLong("dry-run"), help: "Check files and keys only; contact no push provider.")
    var dryRun = false

    func run() async throws {
        let config: HeraldConfig
        do {
            config = try common.load()
        } catch let error as ConfigurationError {
            for problem in error.problems { print(DoctorFinding(.failed, "config", "\(problem.field): \(problem.message)")) }
            throw ExitCode(1)
        }
        var logger = Logger(label: "herald.doctor")
        logger.logLevel = .critical  // the findings say what went wrong, once each
        let findings = await Doctor.check(config, dryRun: dryRun, logger: logger)
        for finding in findings { print(finding) }
        let failed = findings.filter { $0.status == .failed }.count
        print(failed == 0 ? "no problems found" : "\(failed) problem(s) found")
        if failed > 0 { throw ExitCode(1) }
    }
}
