import ArgumentParser
import Foundation

// Push delivery benchmarks (current figures in BENCHMARKS.md, "Push senders"; the method in
// Benchmarks/journal/2026-11-21-push-first-measurement.md; the script is Benchmarks/push-run.sh).
// Every subcommand prints one JSON line per measurement on stdout; progress goes to stderr.
@main
struct PushLoad: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Herald push delivery benchmarks: mock APNs, APNs sender load, queue RSS, Web Push encryption.",
        subcommands: [
            MockAPNsCommand.self, APNsLoad.self, QueueRSS.self, WebPushEncrypt.self, WebPushBreakdown.self, APNsBreakdown.self, DeadlineMemory.self,
            LiveActivityLoad.self, DeparturesFanout.self,
        ])
}

/// The message every APNs measurement sends (Herald and aioapns alike): a chat message with
/// a title, an 82-byte body, a thread, a category, a badge and three custom data keys.
enum SampleMessage {
    static let title = "New message from Alice"
    static let body = "Are we still on for lunch tomorrow? I booked the place near the station for 12:30."
    static let thread = "conversation-42"
    static let category = "MESSAGE"
    static let type = "chat.message"
    static let badge = 3
    /// The Web Push plaintext (what WebPushSender builds for this message), byte-identical in
    /// Benchmarks/peers/pywebpush_encrypt.py.
    static let webPushPlaintext =
        #"{"badge":3,"data":{"conversation_id":"conversation-42","notification_id":"ntf_01JD5R8Y4W2KQ7X9ABCDEF","type":"chat.message"},"notification":{"body":"Are we still on for lunch tomorrow? I booked the place near the station for 12:30.","tag":"conversation-42","title":"New message from Alice"}}"#
}
