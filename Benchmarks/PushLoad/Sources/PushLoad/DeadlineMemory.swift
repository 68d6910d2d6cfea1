import ArgumentParser
import Foundation
import HeraldCore
import HeraldNotifications

/// `deadline-memory`: what `withDeadline` (HeraldCore; used by PushHTTP.execute and twice
/// more per delivery by DeliveryWorker) leaves behind. Its timer task is cancelled when the
/// operation finishes first, but the sleeping task's timer stays queued until the deadline
/// would have passed, so at a steady rate R with timeout T about R × T of them are alive.
struct DeadlineMemory: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "deadline-memory", abstract: "Heap held by withDeadline's cancelled timers.")

    @Option(help: "withDeadline calls (each finishes at once).") var calls = 100_000
    @Option(help: "Their timeout, seconds.") var timeout = 10

    func run() async throws {
        func mib(_ bytes: Int) -> JSON { .double(Double(bytes) / 1_048_576) }
        let before = heapUsage()
        let rssBefore = residentBytes().rss
        let cpu0 = processCPUMicros()
        var sink = 0
        for _ in 0..<calls { sink &+= try await withDeadline(.seconds(Int64(timeout))) { 1 } }
        let cpu = processCPUMicros() - cpu0
        let after = heapUsage()
        let rssAfter = residentBytes().rss
        progress("deadline-memory: waiting \(timeout + 2) s for the timers to fire")
        try await Task.sleep(for: .seconds(timeout + 2))
        let later = heapUsage()
        emit([
            ("bench", .string("deadline-memory")), ("calls", .int(calls)), ("timeout_s", .int(timeout)),
            ("cpu_us_per_call", .double(cpu / Double(calls))),
            ("heap_in_use_before_mib", mib(before.inUse)), ("heap_in_use_after_calls_mib", mib(after.inUse)),
            ("heap_in_use_after_timeout_mib", mib(later.inUse)),
            ("bytes_held_per_call", .int((after.inUse - later.inUse) / max(1, calls))),
            ("rss_before_mib", mib(rssBefore)), ("rss_after_calls_mib", mib(rssAfter)), ("sink", .int(sink & 1)),
        ])
    }
}
