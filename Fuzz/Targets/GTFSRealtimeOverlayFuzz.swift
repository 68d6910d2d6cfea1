// GTFS-Realtime messages laid over a timetable, as every node does with what a producer or
// a backend posts (and again at every start: messages are stored). Properties: nothing in
// the overlay, the departures boards, the runs under way or the alerts' JSON traps, and
// every delay the overlay holds is within a week.
import Foundation
@testable import HeraldGTFS
@testable import HeraldTransit

/// 2026-01-05 08:02 in Sydney.
let overlayNow: Int64 = 1_767_560_520

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGTFSRealtimeOverlay(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard let feed = try? RealtimeFeedDecoder.decode(Data(bytes: data, count: size)) else { return 0 }
    let t = FuzzTimetable.timetable
    let overlay = RealtimeOverlay(feeds: [feed, feed], timetable: t, now: overlayNow)
    let week = RealtimeBounds.maximumDelaySeconds
    for prediction in overlay.predictions.values {
        precondition(prediction.maximumDelay <= week && prediction.maximumEarliness <= week, "a delay beyond a week reached the overlay")
        for position in 0..<8 { _ = prediction.prediction(at: Int32(position)) }
    }
    // The module's own overlay (the one above is this target's instrumented copy) for the
    // answers built on it.
    let served = HeraldGTFS.RealtimeOverlay(feeds: [feed, feed], timetable: t, now: overlayNow)
    precondition(served.predictions.count == overlay.predictions.count)
    let board = DepartureBoard(timetable: t, overlay: served)
    for stop in t.feed.stops.indices {
        for row in board.departures(.init(stop: Int32(stop), at: overlayNow, limit: 10)) {
            _ = t.zone.iso8601(row.estimated ?? row.scheduled)
        }
    }
    for run in RouteActivity(timetable: t, overlay: served).runs(route: 0, at: overlayNow) {
        for next in run.nextStops { _ = t.zone.iso8601(next.estimatedArrival ?? next.scheduledArrival) }
    }
    for alert in overlay.alerts {
        _ = TransitJSON.alert(nil, alert)
        _ = ServiceAlert(realtime: alert, feed: "default").nextStart(after: overlayNow).map { $0 * 1000 }
    }
    return 0
}
