import Foundation
import HeraldCore

/// Parses JSON text into a `JSONValue` with the realtime gateway's own strict parser, for
/// HTTP request bodies.
///
/// Why not Foundation's `JSONDecoder` into `JSONValue`: it goes through `Codable` one value
/// at a time and was 8–9 % of a node's CPU at 2,000 notifications/s (decoding each
/// `POST /notifications` body; BENCHMARKS.md, issue 37), and it accepts what RFC 8259 does
/// not (trailing commas). This accepts exactly the JSON grammar, in one pass.
public enum StrictJSON {
    /// The value, or nil when `data` is not one JSON text.
    public static func parse(_ data: Data) -> JSONValue? {
        let result = data.withUnsafeBytes { raw in JSONParser.parse(bytes: raw.bindMemory(to: UInt8.self)) }
        guard case .success(let value) = result else { return nil }
        return value.json
    }
}
