import Foundation
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

@testable import HeraldRealtime

/// Each acknowledgement goes to the one owner of its token's kind: the kind travels with the
/// event (through the bus on PostgreSQL) and no owner tells its acks from another's by the id.
@Suite struct AckRoutingTests {
    @Test(arguments: TestEngine.allCases)
    func anAckReachesOnlyTheOwnerOfItsKind(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            try await withHub(database) { hub in
                let alpha = AckToken.Kind(rawValue: "alpha")
                let beta = AckToken.Kind(rawValue: "beta")
                let alphas = Observed()
                let betas = Observed()
                hub.onAcknowledge(alpha) { id in alphas.add(id) }
                hub.onAcknowledge(beta) { id in betas.add(id) }
                let member = RecordingSubscriber(1, user: "ann")
                hub.join(member, room: "user:ann")
                // The same id text under two kinds: only the kind decides the owner.
                let sent = [AckToken(alpha, id: "x_1"), AckToken(beta, id: "x_1"), AckToken(.init(rawValue: "nobody"), id: "x_2")]
                for token in sent {
                    try await hub.publish("notification", payload: ["id": .string(token.id)], to: "user:ann", ackToken: token)
                }
                let delivered = await member.waitFor(3).compactMap(\.ackToken)
                #expect(delivered == sent, "the kind arrives with the event")
                for token in delivered { await hub.acknowledge(token) }
                #expect(alphas.tokens == ["x_1"] && betas.tokens == ["x_1"])
                // A later registration replaces the owner (one per kind).
                let replacement = Observed()
                hub.onAcknowledge(alpha) { id in replacement.add(id) }
                await hub.acknowledge(AckToken(alpha, id: "x_3"))
                #expect(replacement.tokens == ["x_3"] && alphas.tokens == ["x_1"])
            }
        }
    }

    /// A publisher waiting for an ack is resumed by its own kind; no module's owner sees it.
    @Test func aPublishersAckResumesItAndNoOwner() async throws {
        try await TestDatabase.with(.sqlite) { database in
            try await withHub(database) { hub in
                let owners = Observed()
                hub.onAcknowledge(.publisher) { id in owners.add(id) }
                let member = RecordingSubscriber(1, user: "ann")
                hub.join(member, room: "user:ann")
                async let acknowledged = hub.publish("offer", payload: ["job": "j1"], to: "user:ann", ackTimeout: Patience.limit)
                let token = try #require(await member.waitFor(1).first?.ackToken)
                #expect(token.kind == .publisher)
                await hub.acknowledge(token)
                #expect(try await acknowledged)
                #expect(owners.tokens.isEmpty)
            }
        }
    }
}
