import HeraldGeo
import Testing

@testable import HeraldDispatch

@Suite struct DriverTrackerTests {
    func record(
        _ id: String, approval: DriverApproval = .approved, online: Bool = true, lat: Double? = nil, lng: Double? = nil, at: Int64? = nil, seq: Int64? = nil
    ) -> DriverRecord {
        DriverRecord(
            userID: id, name: id, phone: nil, truckType: "box", vehicleDescription: nil, licensePlate: nil, approval: approval,
            approvalReason: nil, approvalChangedAt: nil, approvalChangedBy: nil, ratingTotal: 0, ratingCount: 0, completedJobs: 0,
            online: online ? 1 : 0, onlineChangedAt: nil, latitude: lat, longitude: lng, accuracyM: nil, heading: nil, speedMps: nil,
            locationSeq: seq, locationAt: at, locationClientAt: nil, createdAt: 0, updatedAt: 0)
    }

    let sf = GeoPoint(latitude: 37.7749, longitude: -122.4194)

    @Test func onlyApprovedOnlineDriversWithAPositionAreIndexed() {
        let tracker = DriverTracker()
        tracker.load(record("a"))
        tracker.load(record("b", approval: .pending))
        tracker.load(record("c", online: false))
        for id in ["a", "b", "c"] { #expect(tracker.apply(id, LocationUpdate(point: sf), receivedAt: 1_000) == .accepted) }
        #expect(tracker.index.driverIDs == ["a"])
        // Approval and going online bring the kept position into the index; going offline takes it out.
        tracker.load(record("b"))
        tracker.load(record("c"))
        #expect(Set(tracker.index.driverIDs) == ["a", "b", "c"])
        tracker.load(record("a", online: false))
        #expect(Set(tracker.index.driverIDs) == ["b", "c"])
        #expect(tracker.apply("nobody", LocationUpdate(point: sf), receivedAt: 1_000) == .unknownDriver)
    }

    /// A driver's app that restarts counts from 1 again; in a new session its
    /// samples are new (the rider's map would freeze otherwise), within one session older ones
    /// are still dropped, and the session travels with the write so other nodes agree.
    @Test func aRestartedAppsNewSessionCountsAgain() {
        let tracker = DriverTracker()
        tracker.load(record("a"))
        let north = GeoPoint(latitude: 37.8, longitude: -122.4194)
        #expect(tracker.apply("a", LocationUpdate(point: sf, sequence: 500, session: "launch-1"), receivedAt: 1_000) == .accepted)
        #expect(tracker.apply("a", LocationUpdate(point: north, sequence: 1, session: "launch-1"), receivedAt: 1_100) == .stale(lastSequence: 500))
        #expect(tracker.apply("a", LocationUpdate(point: north, sequence: 1, session: "launch-2"), receivedAt: 1_200) == .accepted)
        #expect(tracker.apply("a", LocationUpdate(point: north, sequence: 2, session: "launch-2"), receivedAt: 1_300) == .accepted)
        #expect(tracker.apply("a", LocationUpdate(point: sf, sequence: 2, session: "launch-2"), receivedAt: 1_400) == .stale(lastSequence: 2))
        #expect(tracker.index.position(of: "a")?.point.latitude == north.latitude)
        #expect(tracker.takeDirty().map { [$0.session, $0.sequence.map(String.init)] } == [["launch-2", "2"]])
        // Another node's stored session and sequence are taken in.
        let other = DriverTracker()
        var stored = record("b", lat: 37.7, lng: -122.4, at: 900, seq: 40)
        stored.locationSession = "s-9"
        other.load(stored)
        #expect(other.apply("b", LocationUpdate(point: sf, sequence: 3, session: "s-9"), receivedAt: 1_000) == .stale(lastSequence: 40))
        #expect(other.apply("b", LocationUpdate(point: sf, sequence: 3, session: "s-10"), receivedAt: 1_000) == .accepted)
    }

    @Test func olderSequencesAreDroppedAndOnlyTheNewestIsWritten() {
        let tracker = DriverTracker()
        tracker.load(record("a"))
        let north = GeoPoint(latitude: 37.8, longitude: -122.4194)
        #expect(tracker.apply("a", LocationUpdate(point: sf, sequence: 5), receivedAt: 1_000) == .accepted)
        #expect(tracker.apply("a", LocationUpdate(point: north, sequence: 5), receivedAt: 1_100) == .stale(lastSequence: 5))
        #expect(tracker.apply("a", LocationUpdate(point: north, sequence: 4), receivedAt: 1_200) == .stale(lastSequence: 5))
        #expect(tracker.index.position(of: "a")?.point.latitude == sf.latitude)
        #expect(tracker.apply("a", LocationUpdate(point: north, sequence: 6), receivedAt: 1_300) == .accepted)
        let writes = tracker.takeDirty()
        #expect(writes.count == 1 && writes[0].sequence == 6 && writes[0].latitude == 37.8 && writes[0].receivedAt == 1_300)
        #expect(tracker.takeDirty().isEmpty)
    }

    @Test func aStalePositionFromTheDatabaseDoesNotMoveTheDriverBack() {
        let tracker = DriverTracker()
        tracker.load(record("a"))
        #expect(tracker.apply("a", LocationUpdate(point: sf, sequence: 10), receivedAt: 5_000) == .accepted)
        tracker.load(record("a", lat: 40, lng: -100, at: 4_000, seq: 9))
        #expect(tracker.index.position(of: "a")?.point == sf)
        tracker.load(record("a", lat: 40, lng: -100, at: 6_000, seq: 11))
        #expect(tracker.index.position(of: "a")?.point.latitude == 40)
        #expect(tracker.apply("a", LocationUpdate(point: sf, sequence: 11), receivedAt: 7_000) == .stale(lastSequence: 11))
    }
}
