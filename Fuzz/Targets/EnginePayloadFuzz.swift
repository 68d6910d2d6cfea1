// Engine.IO v4 polling payloads (packets joined by the 0x1E record separator) as a peer
// without a session sends them. Property: decoding never traps, and every payload that
// decodes re-encodes to one that decodes to the same packets.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEnginePayload(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let body = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let packets = try? EngineCodec.decodePayload(body, maxPackets: 1000) else { return 0 }
    let again = try? EngineCodec.decodePayload(EngineCodec.encodePayload(packets), maxPackets: 1000)
    precondition(again == packets, "an Engine.IO payload does not survive encode → decode: \(packets)")
    return 0
}
