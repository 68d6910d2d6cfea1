import Foundation

/// The last event id the app received on each channel, kept across launches, so a client
/// that comes back (a reconnect, or the app started again) asks for exactly what it missed.
public protocol EventCursorStore: Sendable {
    func lastEventID(channel: String) -> String?
    func save(eventID: String, channel: String)
}

/// Cursors in a JSON file, written atomically on each change (the app's Application Support
/// directory on Apple platforms, any writable path elsewhere); with no file, for this run only.
public final class SavedEventCursors: EventCursorStore, @unchecked Sendable {
    // @unchecked: every access to `cursors` and the file goes through `lock`.
    private let file: URL?
    private let lock = NSLock()
    private var cursors: [String: String]

    public init(file: URL? = nil) {
        self.file = file
        cursors = file.flatMap { try? JSONDecoder().decode([String: String].self, from: Data(contentsOf: $0)) } ?? [:]
    }

    public func lastEventID(channel: String) -> String? {
        lock.lock()
        defer { lock.unlock() }
        return cursors[channel]
    }

    public func save(eventID: String, channel: String) {
        lock.lock()
        defer { lock.unlock() }
        guard cursors[channel] != eventID else { return }
        cursors[channel] = eventID
        if let file, let data = try? JSONEncoder().encode(cursors) { try? data.write(to: file, options: .atomic) }
    }
}
