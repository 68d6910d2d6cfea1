import HeraldRealtime
import Testing

@Suite struct DeliveryAcksTests {
    @Test func aClientAcknowledgesUnlessItsHandshakeSaysOtherwise() {
        #expect(DeliveryAcks.acknowledges(auth: nil, query: [:]))
        #expect(DeliveryAcks.acknowledges(auth: .object(["token": .string("t")]), query: ["EIO": "4"]))
        #expect(DeliveryAcks.acknowledges(auth: .object(["acks": .bool(true)]), query: [:]))
        // A string "false" in auth is not the boolean: only the query is text.
        #expect(DeliveryAcks.acknowledges(auth: .object(["acks": .string("false")]), query: [:]))
        #expect(!DeliveryAcks.acknowledges(auth: .object(["acks": .bool(false)]), query: [:]))
        for text in ["false", "FALSE", "0", "no"] {
            #expect(!DeliveryAcks.acknowledges(auth: nil, query: ["acks": text]))
        }
        #expect(DeliveryAcks.acknowledges(auth: nil, query: ["acks": "maybe"]))
    }
}
