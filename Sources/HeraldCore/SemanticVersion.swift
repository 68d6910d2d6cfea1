/// A dotted app version (`1.2.0`, `2.10`, `3`), compared numerically part by part.
///
/// Why not a string compare: "1.10.0" is newer than "1.9.0". Missing parts count as 0, so
/// "1.2" equals "1.2.0". A pre-release or build suffix (`1.2.0-beta.1`, `1.2.0+42`) is
/// ignored for the gate, which only asks "is this build too old".
public struct SemanticVersion: Sendable, Comparable, CustomStringConvertible {
    public let parts: [Int]

    public init?(_ text: String) {
        let core = text.prefix(while: { $0 != "-" && $0 != "+" })
        let pieces = core.split(separator: ".", omittingEmptySubsequences: false)
        guard !pieces.isEmpty, pieces.count <= 4 else { return nil }
        var parts: [Int] = []
        for piece in pieces {
            guard !piece.isEmpty, piece.count <= 9, piece.allSatisfy(\.isASCII), let number = Int(piece), number >= 0 else {
                return nil
            }
            parts.append(number)
        }
        self.parts = parts
    }

    public var description: String { parts.map(String.init).joined(separator: ".") }

    public static func < (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        let count = max(lhs.parts.count, rhs.parts.count)
        for index in 0..<count {
            let left = index < lhs.parts.count ? lhs.parts[index] : 0
            let right = index < rhs.parts.count ? rhs.parts[index] : 0
            if left != right { return left < right }
        }
        return false
    }

    public static func == (lhs: SemanticVersion, rhs: SemanticVersion) -> Bool {
        !(lhs < rhs) && !(rhs < lhs)
    }
}
