import Foundation
import HeraldCore
import HeraldTestSupport
import SwiftProtobuf
import Testing

@testable import HeraldGTFS
@testable import HeraldTransit

/// A GTFS-Realtime message is stored before it is applied and decoded again at every start,
/// so a number no producer should send must never trap: not in decoding, not in the overlay,
/// not in the answers built from it. These are the messages an attack on the server used to
/// stop a node (and every restart after it), then every integer field at its extremes.
@Suite struct HostileRealtimeTests {
    typealias Message = TransitRealtime_FeedMessage

    static let extremes64: [Int64] = [.min, .min + 1, -1_000_000_000_000, -1, 0, 1, 1 << 53, 1 << 62, .max / 1000, .max / 1000 + 1, .max]
    static let extremesU64: [UInt64] = [0, 1, 1_181_050_000, 1_181_050_000_000_000_000, 1 << 53, 1 << 62, UInt64(Int64.max), UInt64(Int64.max) + 1, .max]
    static let extremes32: [Int32] = [.min, .min + 1, -86_400 * 8, -1, 0, 1, 86_400 * 8, .max]
    static let extremesU32: [UInt32] = [0, 1, 2, 200, UInt32(Int32.max), .max]

    static func header(_ timestamp: UInt64? = 1_181_050_000) -> Message {
        var message = Message()
        message.header.gtfsRealtimeVersion = "2.0"
        if let timestamp { message.header.timestamp = timestamp }
        return message
    }

    static func tripUpdate(_ trip: String, edit: (inout TransitRealtime_TripUpdate) -> Void) -> TransitRealtime_FeedEntity {
        var entity = TransitRealtime_FeedEntity()
        entity.id = "e-\(trip)"
        entity.tripUpdate.trip.tripID = trip
        edit(&entity.tripUpdate)
        return entity
    }

    static func stopUpdate(_ stopID: String, edit: (inout TransitRealtime_TripUpdate.StopTimeUpdate) -> Void) -> TransitRealtime_TripUpdate.StopTimeUpdate {
        var update = TransitRealtime_TripUpdate.StopTimeUpdate()
        update.stopID = stopID
        edit(&update)
        return update
    }

    /// Everything a node builds from a message: the overlay, every stop's departures board,
    /// every route's runs, and each alert as JSON and as a push candidate, with each instant
    /// written as ISO 8601 in the agency's zone. Returns the decoded feed.
    @discardableResult
    static func apply(_ message: Message, _ t: Timetable, now: Int64) throws -> RealtimeFeed {
        let feed = try RealtimeFeedDecoder.decode(try message.serializedData(partial: true))
        let overlay = RealtimeOverlay(feeds: [feed, feed], timetable: t, now: now)
        let board = DepartureBoard(timetable: t, overlay: overlay)
        for stop in t.feed.stops.indices {
            for row in board.departures(.init(stop: Int32(stop), at: now, limit: 20)) {
                _ = t.zone.iso8601(row.scheduled)
                _ = row.estimated.map(t.zone.iso8601)
            }
        }
        let activity = RouteActivity(timetable: t, overlay: overlay)
        for route in t.feed.routes.indices {
            for run in activity.runs(route: Int32(route), at: now) {
                for next in run.nextStops { _ = t.zone.iso8601(next.estimatedArrival ?? next.scheduledArrival) }
            }
        }
        for prediction in overlay.predictions.values {
            // An absolute time far from the schedule is no delay either (found by fuzzing:
            // `arrival.time = 0` made a delay of minus 56 years).
            #expect(prediction.maximumDelay <= RealtimeBounds.maximumDelaySeconds && prediction.maximumEarliness <= RealtimeBounds.maximumDelaySeconds)
            for position in 0..<40 { _ = prediction.prediction(at: Int32(position)) }
        }
        for alert in overlay.alerts {
            _ = TransitJSON.alert(nil, alert)
            let service = ServiceAlert(realtime: alert, feed: "default")
            _ = service.fingerprint
            _ = service.nextStart(after: now).map { $0 * 1000 }
            _ = (service.isInForce(at: now), service.hasEnded(at: now))
        }
        return feed
    }

    /// Every number the decoder hands on is within `RealtimeBounds`.
    static func expectBounded(_ feed: RealtimeFeed, _ comment: String) {
        let instants = RealtimeBounds.latestInstant
        let week = RealtimeBounds.maximumDelaySeconds
        #expect(feed.timestamp.map { (0...instants).contains($0) } ?? true, "\(comment)")
        for update in feed.tripUpdates {
            #expect(update.delay.map { (-week...week).contains($0) } ?? true, "\(comment)")
            #expect(update.trip.directionID.map { (0...1).contains($0) } ?? true, "\(comment)")
            for stop in update.stopTimeUpdates {
                for event in [stop.arrival, stop.departure].compactMap({ $0 }) {
                    #expect(event.delay.map { (-week...week).contains($0) } ?? true, "\(comment)")
                    #expect(event.time.map { (0...instants).contains($0) } ?? true, "\(comment)")
                    #expect(event.scheduledTime.map { (0...instants).contains($0) } ?? true, "\(comment)")
                }
            }
        }
        for alert in feed.alerts {
            for period in alert.activePeriods {
                #expect(period.start.map { (0...instants).contains($0) } ?? true, "\(comment)")
                #expect(period.end.map { (0...instants).contains($0) } ?? true, "\(comment)")
            }
        }
    }

    @Test func theAttacksMessagesDecodeAndApplyWithTheirNonsenseDropped() async throws {
        let t = try await GTFSFixtures.timetable(try TransitFixtures.sampleFeedPath())
        let now = GTFSFixtures.local(t, 2007, 6, 5, 8, 5)
        // header.timestamp in nanoseconds: no timestamp (the receive time stands in).
        let nanoseconds = try Self.apply(Self.header(1_181_050_000_000_000_000), t, now: now)
        #expect(nanoseconds.timestamp == nil)
        #expect(try Self.apply(Self.header(UInt64(Int64.max / 1000) + 1), t, now: now).timestamp == nil)
        #expect(try Self.apply(Self.header(1 << 53), t, now: now).timestamp == nil)
        // delay = Int32.min, on the trip and on a stop: no prediction from it.
        var delays = Self.header()
        delays.entity = [
            Self.tripUpdate("AB1") { update in
                update.trip.startDate = "20070605"
                update.delay = .min
                update.stopTimeUpdate = [Self.stopUpdate("BEATTY_AIRPORT") { $0.departure.delay = .min }]
            }
        ]
        let delayed = try Self.apply(delays, t, now: now)
        #expect(delayed.tripUpdates.first?.delay == nil)
        #expect(delayed.tripUpdates.first?.stopTimeUpdates.first?.departure?.delay == nil)
        // arrival.time = Int64.min and -10^12.
        for time: Int64 in [.min, -1_000_000_000_000] {
            var times = Self.header()
            times.entity = [
                Self.tripUpdate("AB1") { update in
                    update.trip.startDate = "20070605"
                    update.stopTimeUpdate = [Self.stopUpdate("BULLFROG") { $0.arrival.time = time }]
                }
            ]
            #expect(try Self.apply(times, t, now: now).tripUpdates.first?.stopTimeUpdates.first?.arrival?.time == nil)
        }
        // An ADDED trip with direction_id 200.
        var added = Self.header()
        added.entity = [
            Self.tripUpdate("EXTRA") { update in
                update.trip.scheduleRelationship = .added
                update.trip.directionID = 200
                update.stopTimeUpdate = [
                    Self.stopUpdate("AMV") { $0.departure.time = now + 600 }, Self.stopUpdate("BEATTY_AIRPORT") { $0.arrival.time = now + 1200 },
                ]
            }
        ]
        let addedFeed = try Self.apply(added, t, now: now)
        #expect(addedFeed.tripUpdates.first?.trip.directionID == nil)
        let overlay = RealtimeOverlay(feeds: [addedFeed], timetable: t, now: now)
        #expect(overlay.added.map(\.directionID) == [-1])
        // An alert starting at 2^62 and ending at 2^64 - 1: held at the last instant (not
        // in force, not ended), never dropped (a dropped start would put it in force now).
        var alert = Self.header()
        var entity = TransitRealtime_FeedEntity()
        entity.id = "a"
        var period = TransitRealtime_TimeRange()
        period.start = 1 << 62
        period.end = .max
        entity.alert.activePeriod = [period]
        entity.alert.informedEntity = [TransitRealtime_EntitySelector.with { $0.routeID = "AB" }]
        alert.entity = [entity]
        let alertFeed = try Self.apply(alert, t, now: now)
        let stored = try #require(alertFeed.alerts.first)
        #expect(stored.activePeriods == [RealtimeAlert.Period(start: RealtimeBounds.latestInstant, end: RealtimeBounds.latestInstant)])
        #expect(!stored.isActive(at: now))
        #expect(TransitJSON.alert(nil, stored)["active_period"]?["end"] == "9999-12-31T23:59:59Z")
    }

    /// Every integer field of the message, alone at each extreme, through everything a node
    /// builds from it.
    @Test func everyIntegerFieldAtItsExtremesNeitherTrapsNorPassesUnbounded() async throws {
        let t = try await GTFSFixtures.timetable(try TransitFixtures.sampleFeedPath())
        let now = GTFSFixtures.local(t, 2007, 6, 5, 8, 5)
        var cases: [(String, Message)] = []
        func trip(_ name: String, _ edit: @escaping (inout TransitRealtime_TripUpdate) -> Void) {
            var message = Self.header()
            // A scheduled run, an added one and a frequency run, each with the edit.
            message.entity = [
                Self.tripUpdate("AB1") {
                    $0.trip.startDate = "20070605"
                    edit(&$0)
                },
                Self.tripUpdate("NEW1") {
                    $0.trip.scheduleRelationship = .added
                    $0.trip.routeID = "AB"
                    $0.stopTimeUpdate = [Self.stopUpdate("AMV") { $0.departure.time = now }, Self.stopUpdate("BULLFROG") { $0.arrival.time = now + 60 }]
                    edit(&$0)
                },
                Self.tripUpdate("CITY1") {
                    $0.trip.startTime = "08:10:00"
                    edit(&$0)
                },
            ]
            cases.append((name, message))
        }
        for value in Self.extremesU64 {
            cases.append(("header.timestamp \(value)", Self.header(value)))
            trip("trip_update.timestamp \(value)") { $0.timestamp = value }
        }
        for value in Self.extremes32 {
            trip("trip_update.delay \(value)") { $0.delay = value }
            trip("stop arrival.delay \(value)") { $0.stopTimeUpdate.append(Self.stopUpdate("BULLFROG") { $0.arrival.delay = value }) }
            trip("stop departure.delay \(value)") { $0.stopTimeUpdate.append(Self.stopUpdate("BEATTY_AIRPORT") { $0.departure.delay = value }) }
        }
        for value in Self.extremes64 {
            trip("stop arrival.time \(value)") { $0.stopTimeUpdate.append(Self.stopUpdate("BULLFROG") { $0.arrival.time = value }) }
            trip("stop departure.time \(value)") { $0.stopTimeUpdate.insert(Self.stopUpdate("AMV") { $0.departure.time = value }, at: 0) }
            trip("stop departure.scheduled_time \(value)") { $0.stopTimeUpdate.append(Self.stopUpdate("BULLFROG") { $0.departure.scheduledTime = value }) }
        }
        for value in Self.extremesU32 {
            trip("trip.direction_id \(value)") { $0.trip.directionID = value }
            trip("stop_sequence \(value)") {
                $0.stopTimeUpdate.append(
                    TransitRealtime_TripUpdate.StopTimeUpdate.with {
                        $0.stopSequence = value
                        $0.departure.delay = 60
                    })
            }
            var vehicle = Self.header()
            vehicle.entity = [
                TransitRealtime_FeedEntity.with { entity in
                    entity.id = "v"
                    entity.vehicle.trip.tripID = "AB1"
                    entity.vehicle.trip.directionID = value
                    entity.vehicle.currentStopSequence = value
                    entity.vehicle.occupancyPercentage = value
                    entity.vehicle.timestamp = UInt64(value) << 32
                }
            ]
            cases.append(("vehicle fields \(value)", vehicle))
        }
        for value in Self.extremesU64 {
            for (start, end) in [(value, nil), (nil, value), (value, value), (0, value)] as [(UInt64?, UInt64?)] {
                var message = Self.header()
                message.entity = [
                    TransitRealtime_FeedEntity.with { entity in
                        entity.id = "alert"
                        entity.alert.activePeriod = [
                            TransitRealtime_TimeRange.with { range in
                                if let start { range.start = start }
                                if let end { range.end = end }
                            }
                        ]
                        entity.alert.informedEntity = [
                            TransitRealtime_EntitySelector.with {
                                $0.routeType = Int32(truncatingIfNeeded: value)
                                $0.directionID = UInt32(truncatingIfNeeded: value)
                            }
                        ]
                    }
                ]
                cases.append(("alert period \(String(describing: start))–\(String(describing: end))", message))
            }
        }
        #expect(cases.count > 120)
        for (name, message) in cases {
            Self.expectBounded(try Self.apply(message, t, now: now), name)
        }
    }

    /// A forged `itinerary:` id resolves only when each of its numbers names a run the
    /// served version has: the day its service runs, a shift one of its frequencies makes.
    @Test func aForgedItineraryIDNamesNoRun() async throws {
        let t = try await GTFSFixtures.timetable(try TransitFixtures.sampleFeedPath())
        let trip = try #require(t.tripsByID["AB1"])
        let range = t.feed.stopTimes.range(trip: trip)
        let tuesday = try #require(ServiceDate.days(year: 2007, month: 6, day: 5))
        let good = ItineraryID.Ride(trip: trip, day: tuesday, shift: 0, board: Int32(range.lowerBound), alight: Int32(range.lowerBound + 1))
        #expect(ItineraryID.isRun(good, of: t))
        var forged: [ItineraryID.Ride] = []
        for day in [Int32.max, Int32.min, -1, 0, tuesday + 365 * 20] {
            forged.append(.init(trip: trip, day: day, shift: 0, board: good.board, alight: good.alight))
        }
        for shift in [Int32.max - ItineraryID.shiftOffset, -ItineraryID.shiftOffset, 86_400, 1] {
            forged.append(.init(trip: trip, day: tuesday, shift: shift, board: good.board, alight: good.alight))
        }
        for ride in forged {
            #expect(!ItineraryID.isRun(ride, of: t), "\(ride)")
            // The text a client would send reads back, and the day arithmetic it would have
            // reached stays total.
            // (A negative number writes a '-', which no id has: refused before it is read.)
            let text = ItineraryID(version: "v", rides: [ride]).text
            #expect(ItineraryID(text)?.rides == (ride.day >= 0 ? [ride] : nil))
            _ = t.zone.iso8601(t.zone.serviceDayStart(ride.day) + Int64(ride.shift))
        }
        // The attack's own id: day Int32.max ("zik0zj") with a shift of a day.
        let attack = try #require(
            ItineraryID(
                "v1.v.\(String(trip, radix: 36))-zik0zj-\(String(ItineraryID.shiftOffset + 86_400, radix: 36))-\(String(good.board, radix: 36))-\(String(good.alight, radix: 36))"
            ))
        #expect(attack.rides.first?.day == Int32.max)
        #expect(!ItineraryID.isRun(attack.rides[0], of: t))
        // A frequency trip's run is accepted only at a shift its frequencies make.
        let city = try #require(t.tripsByID["CITY1"])
        let cityRange = t.feed.stopTimes.range(trip: city)
        let first = t.feed.stopTimes.departure[cityRange.lowerBound]
        let window = try #require(t.frequenciesByTrip[city]?.first)
        let inside = ItineraryID.Ride(
            trip: city, day: tuesday, shift: window.start - first + window.headway, board: Int32(cityRange.lowerBound), alight: Int32(cityRange.lowerBound + 1))
        #expect(ItineraryID.isRun(inside, of: t))
        var outside = inside
        outside.shift = window.end - first + 86_400
        #expect(!ItineraryID.isRun(outside, of: t))
    }

    /// The zone's arithmetic is total: any instant, however far out, writes a date.
    @Test func theZoneArithmeticIsTotal() async throws {
        let t = try await GTFSFixtures.timetable(try TransitFixtures.sampleFeedPath())
        for instant in Self.extremes64 {
            #expect(t.zone.iso8601(instant).count >= 25, "\(instant)")
            _ = (t.zone.localDay(instant), t.zone.localSecondsOfDay(instant), t.zone.instant(localSeconds: instant))
        }
        for day in [Int32.min, -1, 0, Int32.max] {
            _ = t.zone.iso8601(t.zone.serviceDayStart(day))
        }
        #expect(t.zone.iso8601(.max).hasPrefix("9999-12-31T1"))
        #expect(t.zone.iso8601(.min).hasPrefix("0001-01-0") || t.zone.iso8601(.min).hasPrefix("0000-12-31"))
    }
}
