// `itinerary:{id}` channel names as any signed-in client sends them (subscribe, reconnect).
// Properties: reading an id never traps; an id that reads writes back to itself; an id whose
// rides all name runs of the served version resolves, and its status (legs at predicted
// times, the connections' slack, a replan) is computed without trapping, whatever its
// numbers; one that does not resolve is `expired`.
import Foundation
import Synchronization
@testable import HeraldGTFS
@testable import HeraldTransit

/// `FuzzTimetable` served as version `fv1`.
let itinerarySnapshot: TransitSnapshot = {
    let timetable = FuzzTimetable.timetable
    let version = FeedVersionRecord(
        id: "fv1", feedName: "default", version: "1", sha256: "", sizeBytes: 0, status: .ready, source: nil, rowCount: 0, stopTimeCount: 0,
        report: nil, importedAt: 0)
    return TransitSnapshot(feeds: [LoadedFeed(name: "default", version: version, timetable: timetable, planner: TransitLoader.planner(timetable, walking: WalkingRules(), now: Int64(Date().timeIntervalSince1970)))])
}()

/// The status is async (a replan's searches are scheduled); libFuzzer's entry point is not.
func waitFor<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
    let result = Mutex<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        let value = await work()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzItineraryID(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let id = ItineraryID(text) else { return 0 }
    precondition(ItineraryID(id.text) == id, "an id does not read back from its own text")
    let timetable = itinerarySnapshot.feeds[0].timetable
    let runs = id.version == "fv1" && !id.rides.isEmpty && id.rides.allSatisfy { ItineraryID.isRun($0, of: timetable) }
    let status = waitFor { await ItineraryWatch.status(id.text, snapshot: itinerarySnapshot, planner: .init()) }
    precondition((status["status"] == "expired") == !runs, "status \(String(describing: status["status"])) for an id whose runs \(runs ? "exist" : "do not")")
    return 0
}
