import Foundation
import HeraldCore
import SwiftProtobuf
import Testing

@testable import HeraldGTFS

@Suite struct TripPredictionTests {
    typealias U = TripPrediction.Update

    @Test func aDelayHoldsUntilTheNextUpdate() {
        let p = TripPrediction(updates: [U(position: 2, arrivalDelay: 60, departureDelay: 90), U(position: 5, departureDelay: -30)])
        #expect(p.prediction(at: 1) == .unknown)
        #expect(p.prediction(at: 2) == .init(arrivalDelay: 60, departureDelay: 90, cancelled: false))
        #expect(p.prediction(at: 3) == .init(arrivalDelay: 90, departureDelay: 90, cancelled: false))
        #expect(p.prediction(at: 4).departureDelay == 90)
        #expect(p.prediction(at: 5) == .init(arrivalDelay: -30, departureDelay: -30, cancelled: false))
        #expect(p.prediction(at: 9).departureDelay == -30)
        #expect(p.maximumDelay == 90)
    }

    @Test func theTripDelayHoldsUntilTheFirstStopUpdate() {
        let p = TripPrediction(tripDelay: 120, updates: [U(position: 4, departureDelay: 30)])
        #expect(p.prediction(at: 0).departureDelay == 120)
        #expect(p.prediction(at: 3).departureDelay == 120)
        #expect(p.prediction(at: 6).departureDelay == 30)
    }

    @Test func aSkippedStopIsCancelledButTheDelayCarriesOverIt() {
        let p = TripPrediction(updates: [U(position: 1, departureDelay: 200), U(position: 2, relationship: .skipped)])
        #expect(p.prediction(at: 2).cancelled)
        #expect(p.prediction(at: 2).departureDelay == nil)
        #expect(p.prediction(at: 3) == .init(arrivalDelay: 200, departureDelay: 200, cancelled: false))
    }

    @Test func noDataStopsThePredictionUntilTheNextUpdate() {
        let p = TripPrediction(updates: [U(position: 1, departureDelay: 200), U(position: 3, relationship: .noData), U(position: 6, departureDelay: 10)])
        #expect(p.prediction(at: 2).departureDelay == 200)
        #expect(p.prediction(at: 3) == .unknown)
        #expect(p.prediction(at: 5) == .unknown)
        #expect(p.prediction(at: 6).departureDelay == 10)
    }

    @Test func aCancelledTripIsCancelledEverywhere() {
        let p = TripPrediction(canceled: true)
        #expect(p.prediction(at: 0).cancelled)
        #expect(p.prediction(at: 100).cancelled)
    }
}

/// FeedMessages built with the generated protobuf types, encoded, decoded and laid over the
/// sample timetable.
@Suite struct RealtimeOverlayTests {
    typealias Message = TransitRealtime_FeedMessage

    static func message(_ entities: [TransitRealtime_FeedEntity], timestamp: UInt64 = 1_181_050_000) -> Data {
        var message = Message()
        message.header.gtfsRealtimeVersion = "2.0"
        message.header.timestamp = timestamp
        message.entity = entities
        return try! message.serializedData()
    }

    static func update(
        _ id: String, trip: String, date: String? = nil, relationship: TransitRealtime_TripDescriptor.ScheduleRelationship = .scheduled,
        _ stops: [TransitRealtime_TripUpdate.StopTimeUpdate]
    ) -> TransitRealtime_FeedEntity {
        var entity = TransitRealtime_FeedEntity()
        entity.id = id
        entity.tripUpdate.trip.tripID = trip
        if let date { entity.tripUpdate.trip.startDate = date }
        entity.tripUpdate.trip.scheduleRelationship = relationship
        entity.tripUpdate.stopTimeUpdate = stops
        return entity
    }

    static func stop(_ sequence: UInt32? = nil, id: String? = nil, delay: Int32? = nil, time: Int64? = nil, skipped: Bool = false)
        -> TransitRealtime_TripUpdate.StopTimeUpdate
    {
        var update = TransitRealtime_TripUpdate.StopTimeUpdate()
        if let sequence { update.stopSequence = sequence }
        if let id { update.stopID = id }
        if let delay { update.departure.delay = delay }
        if let time { update.departure.time = time }
        if skipped { update.scheduleRelationship = .skipped }
        return update
    }

    static func overlay(_ data: Data, _ t: Timetable, now: Int64) throws -> RealtimeOverlay {
        RealtimeOverlay(feeds: [try RealtimeFeedDecoder.decode(data)], timetable: t, now: now)
    }

    @Test func delaysPropagateAndLateRunsStayOnTheBoard() async throws {
        let t = try await TimetableTests.timetable(try GTFSTestData.sampleFeedPath())
        let nine = TimetableTests.local(t, 2007, 6, 5, 8, 55)
        // AB1 (08:00 at the airport, 08:15 at Bullfrog) runs 7 minutes late from its first stop.
        let data = Self.message([Self.update("e1", trip: "AB1", date: "20070605", [Self.stop(1, delay: 420)])])
        let overlay = try Self.overlay(data, t, now: nine)
        let board = DepartureBoard(timetable: t, overlay: overlay)
        // At 08:05 the 08:00 run has not left yet (08:07).
        let airport = board.departures(.init(stop: t.stopsByID["BEATTY_AIRPORT"]!, at: TimetableTests.local(t, 2007, 6, 5, 8, 5), limit: 1))
        #expect(airport.map(\.tripID) == ["AB1"])
        #expect(airport.first?.delay == 420)
        #expect(airport.first.map { t.zone.iso8601($0.estimated!) } == "2007-06-05T08:07:00-07:00")
        // The delay carries to Bullfrog: 08:15 + 7 = 08:22, still on the board at 08:20.
        let bullfrog = board.departures(.init(stop: t.stopsByID["BULLFROG"]!, at: TimetableTests.local(t, 2007, 6, 5, 8, 20), limit: 2))
        #expect(bullfrog.map(\.tripID) == ["BFC1", "AB2"])
        // (AB1 ends at Bullfrog: an arrival, not a departure; BFC1 leaves at 08:20 with no prediction.)
        #expect(bullfrog.first?.estimated == nil)
        #expect(bullfrog.first?.delay == nil)
    }

    @Test func skippedStopsAndCancelledTripsShowAsCancelled() async throws {
        let t = try await TimetableTests.timetable(try GTFSTestData.sampleFeedPath())
        let now = TimetableTests.local(t, 2007, 6, 5, 7, 0)
        let data = Self.message([
            Self.update("e1", trip: "BFC1", date: "20070605", relationship: .canceled, []),
            Self.update("e2", trip: "AB1", date: "20070605", [Self.stop(1, id: "BEATTY_AIRPORT", skipped: true)]),
        ])
        let board = DepartureBoard(timetable: t, overlay: try Self.overlay(data, t, now: now))
        let bullfrog = board.departures(.init(stop: t.stopsByID["BULLFROG"]!, at: now, limit: 1))
        #expect(bullfrog.map(\.tripID) == ["BFC1"])
        #expect(bullfrog.first?.cancelled == true)
        let airport = board.departures(.init(stop: t.stopsByID["BEATTY_AIRPORT"]!, at: now, limit: 1))
        #expect(airport.first?.tripID == "AB1")
        #expect(airport.first?.cancelled == true)
        #expect(airport.first?.estimated == nil)
    }

    @Test func absoluteTimesBecomeDelaysAndRunsWithoutADateAreTodays() async throws {
        let t = try await TimetableTests.timetable(try GTFSTestData.sampleFeedPath())
        let now = TimetableTests.local(t, 2007, 6, 5, 11, 50)
        // AB2 leaves Bullfrog at 12:05; the feed says 12:09 as an absolute time and no date.
        let announced = TimetableTests.local(t, 2007, 6, 5, 12, 9)
        let data = Self.message([Self.update("e1", trip: "AB2", [Self.stop(id: "BULLFROG", time: announced)])])
        let overlay = try Self.overlay(data, t, now: now)
        #expect(overlay.predictions.keys.map { ServiceDate.iso($0.day) } == ["2007-06-05"])
        let rows = DepartureBoard(timetable: t, overlay: overlay).departures(.init(stop: t.stopsByID["BULLFROG"]!, at: now, limit: 1))
        #expect(rows.first?.tripID == "AB2")
        #expect(rows.first?.delay == 240)
    }

    @Test func addedTripsAppear() async throws {
        let t = try await TimetableTests.timetable(try GTFSTestData.sampleFeedPath())
        let now = TimetableTests.local(t, 2007, 6, 5, 9, 0)
        var entity = Self.update(
            "extra", trip: "EXTRA1", relationship: .new,
            [
                Self.stop(1, id: "AMV", time: TimetableTests.local(t, 2007, 6, 5, 9, 30)),
                Self.stop(2, id: "BEATTY_AIRPORT", time: TimetableTests.local(t, 2007, 6, 5, 10, 30)),
            ])
        entity.tripUpdate.trip.routeID = "AAMV"
        let board = DepartureBoard(timetable: t, overlay: try Self.overlay(Self.message([entity]), t, now: now))
        let rows = board.departures(.init(stop: t.stopsByID["AMV"]!, at: now, limit: 1))
        #expect(rows.first?.tripID == "EXTRA1")
        #expect(rows.first?.added == true)
        #expect(rows.first.map { t.feed.routes[Int($0.route)].id } == "AAMV")
        #expect(rows.first.map { t.zone.iso8601($0.scheduled) } == "2007-06-05T09:30:00-07:00")
    }

    @Test func unknownTripsAreCountedNotMatched() async throws {
        let t = try await TimetableTests.timetable(try GTFSTestData.sampleFeedPath())
        let data = Self.message([Self.update("x", trip: "NO_SUCH_TRIP", [Self.stop(1, delay: 60)])])
        let overlay = try Self.overlay(data, t, now: TimetableTests.local(t, 2007, 6, 5, 9, 0))
        #expect(overlay.predictions.isEmpty)
        #expect(overlay.unmatched == 1)
    }

    @Test func malformedMessagesAreRefused() throws {
        #expect(throws: RealtimeFeedDecoder.DecodeError.malformed) { try RealtimeFeedDecoder.decode(Data([0x0A, 0xFF, 0x01])) }
        var headerless = Message()
        headerless.entity = [Self.update("e", trip: "AB1", [])]
        #expect(throws: RealtimeFeedDecoder.DecodeError.missingHeader) { try RealtimeFeedDecoder.decode(try headerless.serializedData(partial: true)) }
        #expect(throws: RealtimeFeedDecoder.DecodeError.tooLarge(limit: 10)) { try RealtimeFeedDecoder.decode(Data(count: 11), maxBytes: 10) }
    }

    @Test func decodesTheRealTripUpdatesFile() async throws {
        let data = try Data(contentsOf: URL(fileURLWithPath: try GTFSTestData.realFeedPath("tripUpdates.pb")))
        // Seconds in a debug build: decoded off the cooperative pool the other tests share.
        let feed = try await BlockingWork.run { try RealtimeFeedDecoder.decode(data) }
        #expect(feed.timestamp == 1_417_387_583)
        #expect(feed.tripUpdates.count == 2847)
        #expect(feed.vehicles.isEmpty && feed.alerts.isEmpty)
        #expect(feed.tripUpdates.allSatisfy { $0.trip.tripID != nil })
        // It names trips of none of our feeds: laid over Halifax nothing matches, nothing breaks.
        let halifax = try await TimetableTests.timetable(try GTFSTestData.realFeedPath("halifax.zip"))
        let overlay = try await BlockingWork.run { RealtimeOverlay(feeds: [feed], timetable: halifax, now: 1_772_600_000) }
        #expect(overlay.predictions.isEmpty)
        #expect(overlay.unmatched == 2847)
        // Every truncation of it is refused or decodes; none crashes.
        try await BlockingWork.run {
            for length in stride(from: 0, to: 4096, by: 7) {
                _ = try? RealtimeFeedDecoder.decode(data.prefix(length))
            }
        }
    }
}
