// Client WebSocket frames (RFC 6455 §5.2) as a stranger's socket delivers them, in arbitrary
// chunks. The first input byte picks the largest payload accepted and where the bytes are
// split. Properties: reading never traps; a frame never exceeds the limit; an incomplete
// frame leaves the buffer untouched; and bytes that arrive in two reads give the same frames
// (and the same failure) as bytes that arrive at once.
import NIOCore

struct FrameRun: Equatable {
    var frames: [String] = []
    var failure: WebSocketFrameReader.Failure?
}

func readAll(_ chunks: [[UInt8]], maxPayload: Int) -> FrameRun {
    let reader = WebSocketFrameReader()
    var buffer = ByteBuffer()
    var run = FrameRun()
    for chunk in chunks {
        buffer.writeBytes(chunk)
        while true {
            let before = buffer.readerIndex
            do {
                guard let frame = try reader.next(from: &buffer, maxPayload: maxPayload) else {
                    precondition(buffer.readerIndex == before, "an incomplete frame moved the reader")
                    break
                }
                precondition(frame.payload.readableBytes <= maxPayload, "a frame over the limit was returned")
                run.frames.append("\(frame.fin) \(frame.opcode) \(Array(frame.payload.readableBytesView))")
            } catch {
                run.failure = error
                return run
            }
        }
    }
    return run
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocketFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let control = data[0]
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let maxPayload = [16, 125, 1024, 16 * 1024, 1 << 20][Int(control & 0x07) % 5]
    let split = bytes.isEmpty ? 0 : Int(control >> 3) * bytes.count / 31
    let whole = readAll([bytes], maxPayload: maxPayload)
    let pieces = readAll([Array(bytes[..<split]), Array(bytes[split...])], maxPayload: maxPayload)
    precondition(whole == pieces, "frames depend on how the bytes were split: \(whole) vs \(pieces)")
    return 0
}
