import Foundation
import HeraldCore
import HeraldServer
import HeraldServerTestSupport
import HeraldTransit
import SwiftProtobuf

@testable import HeraldGTFS

/// GTFS-Realtime messages for tests, written with the generated protobuf types.
enum FeedMessages {
    static func message(_ entities: [TransitRealtime_FeedEntity], timestamp: Int64) -> Data {
        var message = TransitRealtime_FeedMessage()
        message.header.gtfsRealtimeVersion = "2.0"
        message.header.timestamp = UInt64(timestamp)
        message.entity = entities
        return try! message.serializedData()
    }

    static func tripUpdate(
        _ id: String, trip: String, date: String? = nil, canceled: Bool = false, stops: [(sequence: UInt32, delay: Int32?, skipped: Bool)] = []
    ) -> TransitRealtime_FeedEntity {
        var entity = TransitRealtime_FeedEntity()
        entity.id = id
        entity.tripUpdate.trip.tripID = trip
        if let date { entity.tripUpdate.trip.startDate = date }
        if canceled { entity.tripUpdate.trip.scheduleRelationship = .canceled }
        entity.tripUpdate.stopTimeUpdate = stops.map { stop in
            var update = TransitRealtime_TripUpdate.StopTimeUpdate()
            update.stopSequence = stop.sequence
            if let delay = stop.delay { update.departure.delay = delay }
            if stop.skipped { update.scheduleRelationship = .skipped }
            return update
        }
        return entity
    }

    static func vehicle(
        _ id: String, trip: String, date: String, latitude: Float, longitude: Float, bearing: Float, speed: Float, occupancy: Int, timestamp: Int64
    ) -> TransitRealtime_FeedEntity {
        var entity = TransitRealtime_FeedEntity()
        entity.id = id
        entity.vehicle.trip.tripID = trip
        entity.vehicle.trip.startDate = date
        entity.vehicle.vehicle.id = id
        entity.vehicle.position.latitude = latitude
        entity.vehicle.position.longitude = longitude
        entity.vehicle.position.bearing = bearing
        entity.vehicle.position.speed = speed
        entity.vehicle.occupancyStatus = TransitRealtime_VehiclePosition.OccupancyStatus(rawValue: occupancy)!
        entity.vehicle.timestamp = UInt64(timestamp)
        return entity
    }

    static func alert(
        _ id: String, route: String? = nil, stop: String? = nil, severity: TransitRealtime_Alert.SeverityLevel, header: String, start: Int64, end: Int64
    ) -> TransitRealtime_FeedEntity {
        var entity = TransitRealtime_FeedEntity()
        entity.id = id
        var selector = TransitRealtime_EntitySelector()
        if let route { selector.routeID = route }
        if let stop { selector.stopID = stop }
        entity.alert.informedEntity = [selector]
        entity.alert.severityLevel = severity
        entity.alert.effect = .significantDelays
        entity.alert.cause = .technicalProblem
        var period = TransitRealtime_TimeRange()
        period.start = UInt64(start)
        period.end = UInt64(end)
        entity.alert.activePeriod = [period]
        var text = TransitRealtime_TranslatedString.Translation()
        text.text = header
        text.language = "en"
        entity.alert.headerText.translation = [text]
        return entity
    }
}

extension TestSession {
    /// Imports the sample feed as `default` and waits for nothing (the import swaps at once).
    func importSample(_ name: String = "default") async throws -> FeedImporter.Outcome {
        try await runtime.transit.service.feeds.importFeed(name, source: .path(try TransitFixtures.sampleFeedPath()), requestedBy: "test")
    }

    /// POSTs a protobuf body.
    func postProtobuf(_ uri: String, _ body: Data, token: String) async throws -> TestReply {
        try await request(.post, uri, token: token, headers: [.contentType: "application/x-protobuf"], bytes: body)
    }
}

/// 2007-06-05 08:05 in Los Angeles (the sample feed's zone): a Tuesday, FULLW runs.
let sampleMorning = Date(timeIntervalSince1970: 1_181_055_900)
