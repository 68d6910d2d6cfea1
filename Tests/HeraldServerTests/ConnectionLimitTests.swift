import Foundation
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

    @Test func theListenBacklogIsTheKernelsMaximum() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("somaxconn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        func backlog(_ content: String?) throws -> Int {
            let file = directory.appendingPathComponent(UUID().uuidString)
            if let content { try content.write(to: file, atomically: true, encoding: .utf8) }
            return ConnectionLimit.listenBacklog(somaxconnPath: file.path)
        }
        #expect(try backlog("4096\n") == 4096)
        #expect(try backlog("128") == 128)
        #expect(try backlog("1000000\n") == 65_535)
        // Unreadable or nonsense: what recent kernels default to.
        #expect(try backlog(nil) == 4096)
        #expect(try backlog("many") == 4096)
        #expect(try backlog("0") == 4096)
        #expect(ConnectionLimit.listenBacklog() > 0)
    }

    @Test func theSoftDescriptorLimitIsRaisedToTheHardOne() {
        let raised = ConnectionLimit.raiseDescriptorLimit()
        var limits = rlimit()
        #expect(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limits) == 0)
        #expect(limits.rlim_cur == limits.rlim_max)
        #expect(raised == Int(clamping: min(limits.rlim_cur, 1 << 24)))
    }
}
