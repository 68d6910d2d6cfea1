import Glibc
import HeraldServer
import Testing

@Suite struct ConnectionLimitTests {
    @Test func theDescriptorLimitLessAReserveIsTheDefault() {
        let limit = ConnectionLimit.resolve(configured: nil, descriptors: 65_536, databaseConnections: 20)
        #expect(limit == ConnectionLimit(reserve: 148, limit: 65_388))
    }

    @Test func aConfiguredLimitIsKeptUnlessTheDescriptorsCannotHoldIt() {
        #expect(ConnectionLimit.resolve(configured: 5_000, descriptors: 65_536, databaseConnections: 20).limit == 5_000)
        #expect(ConnectionLimit.resolve(configured: 50_000, descriptors: 1_024, databaseConnections: 20).limit == 876)
        // Even a tiny table leaves one connection rather than none.
        #expect(ConnectionLimit.resolve(configured: nil, descriptors: 100, databaseConnections: 20).limit == 1)
    }

    @Test func theSoftDescriptorLimitIsRaisedToTheHardOne() {
        let raised = ConnectionLimit.raiseDescriptorLimit()
        var limits = rlimit()
        #expect(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits) == 0)
        #expect(limits.rlim_cur == limits.rlim_max)
        #expect(raised == Int(clamping: min(limits.rlim_cur, 1 << 24)))
    }
}
