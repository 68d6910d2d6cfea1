// GTFS-Realtime FeedMessages (protobuf) as a backend or an agency's feed posts them to
// `POST /transit/realtime`. Properties: decoding never traps and stays within its limits;
// a feed that decodes, serialized again by SwiftProtobuf, decodes to the same feed.
import Foundation
import SwiftProtobuf

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGTFSRealtime(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    guard let feed = try? RealtimeFeedDecoder.decode(bytes) else { return 0 }
    var options = BinaryDecodingOptions()
    options.messageDepthLimit = 64
    guard let message = try? TransitRealtime_FeedMessage(serializedBytes: bytes, partial: true, options: options),
        let again = try? message.serializedData(partial: true)
    else {
        preconditionFailure("a feed that decoded does not parse or serialize again")
    }
    let second = try? RealtimeFeedDecoder.decode(again)
    precondition(second == feed, "a feed does not survive serialize → decode")
    return 0
}
