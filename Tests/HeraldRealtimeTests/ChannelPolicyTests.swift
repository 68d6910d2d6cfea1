import HeraldAuth
import HeraldCore
import HeraldRealtime
import Testing

/// Channels belong to the modules that claim their prefix, including the id fields that name
/// them in messages: the gateway itself knows no domain channel.
@Suite struct ChannelPolicyTests {
    @Test func anIdFieldNamesAChannelOnlyOnceItsOwnerRegisteredIt() async throws {
        let policy = ChannelPolicy()
        let message: [String: JSONValue] = ["type": "reconnect", "trip_id": "tr_1"]
        #expect(policy.channel(aliasedIn: message) == nil)
        policy.alias(field: "trip_id", prefix: "trip")
        #expect(policy.channel(aliasedIn: message) == "trip:tr_1")
        #expect(policy.channel(aliasedIn: ["trip_id": 7]) == nil)  // an id is text

        let rider = Identity(userID: "rider", role: .customer, expiresAt: .infinity)
        #expect(try await policy.mayAccess(rider, channel: "trip:tr_1") == false)  // unclaimed prefixes are private
        policy.allow(prefix: "trip") { identity, channel in identity.userID == "rider" && channel == "trip:tr_1" }
        #expect(try await policy.mayAccess(rider, channel: "trip:tr_1"))
        #expect(try await policy.mayAccess(rider, channel: "user:rider"))
        #expect(try await policy.mayAccess(rider, channel: "user:other") == false)
    }
}
