// The strict JSON parser every Socket.IO event goes through. Property: parsing never traps
// or recurses without bound; a value that parses, written back out, parses to the same value.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard case .success(let value) = JSONParser.parse(bytes: UnsafeBufferPointer(start: data, count: size)) else { return 0 }
    var writer = JSONWriter()
    var attachments: [[UInt8]] = []
    writer.write(value, placeholders: false, attachments: &attachments)
    let again = writer.bytes.withUnsafeBufferPointer { JSONParser.parse(bytes: $0) }
    guard case .success(let reparsed) = again else { preconditionFailure("written JSON does not parse: \(writer.string)") }
    precondition(reparsed == value, "a JSON value does not survive write → parse: \(writer.string)")
    return 0
}
