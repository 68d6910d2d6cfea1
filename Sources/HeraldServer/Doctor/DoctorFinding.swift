/// One line of `herald doctor`: what was checked and what was found.
///
/// Why one line each: an operator setting up a node reads the list top to bottom and fixes
/// the lines marked `FAIL`; each says where (`push.apns`) and what, never a stack trace.
public struct DoctorFinding: Sendable, Equatable, CustomStringConvertible {
    public enum Status: String, Sendable {
        case ok = "ok"
        case warning = "warn"
        case failed = "FAIL"
        case skipped = "skip"
    }

    public var status: Status
    /// The part of the setup: `config`, `database`, `push.apns`…
    public var check: String
    public var message: String

    public init(_ status: Status, _ check: String, _ message: String) {
        self.status = status
        self.check = check
        self.message = message
    }

    public var description: String {
        let mark = status.rawValue.padding(toLength: 5, withPad: " ", startingAt: 0)
        let name = check.padding(toLength: max(14, check.count + 1), withPad: " ", startingAt: 0)
        // One line, whatever the message carried.
        return mark + name + message.split(whereSeparator: \.isNewline).joined(separator: " ")
    }
}
