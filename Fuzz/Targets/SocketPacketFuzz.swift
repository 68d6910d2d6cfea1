// Socket.IO v5 packets as text frames, each input split at 0x00 into a text frame and the
// binary attachments that follow it. Property: decoding never traps; a packet that decodes
// without attachments re-encodes to text that decodes to the same packet.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSocketPacket(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let parts = UnsafeBufferPointer(start: data, count: size).split(separator: 0, omittingEmptySubsequences: false)
    guard let first = parts.first else { return 0 }
    var decoder = SocketPacketDecoder(maxAttachments: 10)
    let text = String(decoding: first, as: UTF8.self)
    guard let packet = try? decoder.decode(text: text) else {
        for attachment in parts.dropFirst() where decoder.isAwaitingAttachments {
            _ = try? decoder.add(attachment: Array(attachment))
        }
        return 0
    }
    let (encoded, attachments) = SocketPacketEncoder.encode(packet)
    guard attachments.isEmpty else { return 0 }
    var second = SocketPacketDecoder(maxAttachments: 10)
    let again = try? second.decode(text: encoded)
    precondition(again == packet, "a Socket.IO packet does not survive encode → decode: \(text)")
    return 0
}
