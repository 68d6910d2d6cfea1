import Foundation
import SwiftProtobuf

/// Reads a GTFS-Realtime FeedMessage (protobuf) into a `RealtimeFeed`.
///
/// The protobuf types are generated once from the official `gtfs-realtime.proto` with
/// apple/swift-protobuf's `protoc-gen-swift` and committed (`Realtime/Generated`,
/// `scripts/generate-gtfs-realtime`); swift-protobuf marks its messages with copy-on-write
/// storage `@unchecked Sendable`, which is that library's documented contract, not ours.
/// A message that does not parse, or lacks the required header, is refused whole: the
/// last good feed keeps serving.
public enum RealtimeFeedDecoder {
    public enum DecodeError: Error, Equatable, Sendable {
        case malformed
        case missingHeader
        case tooLarge(limit: Int)
    }

    public static func decode(_ bytes: Data, maxBytes: Int = 64 << 20) throws(DecodeError) -> RealtimeFeed {
        guard bytes.count <= maxBytes else { throw .tooLarge(limit: maxBytes) }
        let message: TransitRealtime_FeedMessage
        do {
            var options = BinaryDecodingOptions()
            options.messageDepthLimit = 64
            // Partial: a missing required field is checked here and named, not a parse failure.
            message = try TransitRealtime_FeedMessage(serializedBytes: bytes, partial: true, options: options)
        } catch {
            throw .malformed
        }
        guard message.hasHeader, message.header.hasGtfsRealtimeVersion else { throw .missingHeader }
        var feed = RealtimeFeed()
        feed.timestamp = message.header.hasTimestamp ? RealtimeBounds.instant(message.header.timestamp) : nil
        feed.isDifferential = message.header.incrementality == .differential
        for entity in message.entity {
            if entity.isDeleted {
                feed.deletedEntities.append(entity.id)
                continue
            }
            if entity.hasTripUpdate, entity.tripUpdate.hasTrip { feed.tripUpdates.append(tripUpdate(entity.id, entity.tripUpdate)) }
            if entity.hasVehicle { feed.vehicles.append(vehicle(entity.id, entity.vehicle)) }
            if entity.hasAlert { feed.alerts.append(alert(entity.id, entity.alert)) }
        }
        return feed
    }

    static func descriptor(_ trip: TransitRealtime_TripDescriptor) -> RealtimeTripDescriptor {
        var result = RealtimeTripDescriptor()
        result.tripID = trip.hasTripID ? trip.tripID : nil
        result.routeID = trip.hasRouteID ? trip.routeID : nil
        result.directionID = trip.hasDirectionID ? RealtimeBounds.direction(trip.directionID) : nil
        if trip.hasStartTime {
            result.startTime = Array(trip.startTime.utf8).withUnsafeBufferPointer { GTFSValueParser.time($0) }
        }
        if trip.hasStartDate {
            result.startDay = Array(trip.startDate.utf8).withUnsafeBufferPointer { GTFSValueParser.date($0) }
        }
        switch trip.scheduleRelationship {
        case .scheduled: result.relationship = .scheduled
        case .added: result.relationship = .added
        case .unscheduled: result.relationship = .unscheduled
        case .canceled: result.relationship = .canceled
        case .replacement: result.relationship = .replacement
        case .duplicated: result.relationship = .duplicated
        case .deleted: result.relationship = .deleted
        case .new: result.relationship = .new
        }
        return result
    }

    static func vehicleDescriptor(_ vehicle: TransitRealtime_VehicleDescriptor) -> RealtimeVehicleDescriptor {
        RealtimeVehicleDescriptor(
            id: vehicle.hasID ? vehicle.id : nil, label: vehicle.hasLabel ? vehicle.label : nil,
            licensePlate: vehicle.hasLicensePlate ? vehicle.licensePlate : nil)
    }

    static func event(_ event: TransitRealtime_TripUpdate.StopTimeEvent) -> RealtimeStopTimeEvent {
        RealtimeStopTimeEvent(
            delay: event.hasDelay ? RealtimeBounds.delay(event.delay) : nil, time: event.hasTime ? RealtimeBounds.instant(event.time) : nil,
            scheduledTime: event.hasScheduledTime ? RealtimeBounds.instant(event.scheduledTime) : nil)
    }

    static func tripUpdate(_ id: String, _ update: TransitRealtime_TripUpdate) -> RealtimeTripUpdate {
        var result = RealtimeTripUpdate(entityID: id, trip: descriptor(update.trip))
        result.vehicle = update.hasVehicle ? vehicleDescriptor(update.vehicle) : nil
        result.timestamp = update.hasTimestamp ? RealtimeBounds.instant(update.timestamp) : nil
        result.delay = update.hasDelay ? RealtimeBounds.delay(update.delay) : nil
        result.stopTimeUpdates = update.stopTimeUpdate.map { stu in
            var value = RealtimeStopTimeUpdate()
            value.stopSequence = stu.hasStopSequence ? Int32(clamping: stu.stopSequence) : nil
            value.stopID = stu.hasStopID ? stu.stopID : nil
            value.arrival = stu.hasArrival ? event(stu.arrival) : nil
            value.departure = stu.hasDeparture ? event(stu.departure) : nil
            switch stu.scheduleRelationship {
            case .scheduled: value.relationship = .scheduled
            case .skipped: value.relationship = .skipped
            case .noData: value.relationship = .noData
            case .unscheduled: value.relationship = .unscheduled
            }
            if stu.hasStopTimeProperties, stu.stopTimeProperties.hasAssignedStopID {
                value.assignedStopID = stu.stopTimeProperties.assignedStopID
            }
            value.departureOccupancy = stu.hasDepartureOccupancyStatus ? occupancyName(stu.departureOccupancyStatus.rawValue) : nil
            return value
        }
        return result
    }

    static func vehicle(_ id: String, _ position: TransitRealtime_VehiclePosition) -> RealtimeVehicle {
        var result = RealtimeVehicle(entityID: id)
        result.trip = position.hasTrip ? descriptor(position.trip) : nil
        result.vehicle = position.hasVehicle ? vehicleDescriptor(position.vehicle) : nil
        if position.hasPosition, position.position.hasLatitude, position.position.hasLongitude {
            let latitude = Double(position.position.latitude)
            let longitude = Double(position.position.longitude)
            if latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude) {
                result.latitude = latitude
                result.longitude = longitude
            }
            if position.position.hasBearing, position.position.bearing.isFinite { result.bearing = Double(position.position.bearing) }
            if position.position.hasSpeed, position.position.speed.isFinite, position.position.speed >= 0 { result.speed = Double(position.position.speed) }
        }
        result.currentStopSequence = position.hasCurrentStopSequence ? Int32(clamping: position.currentStopSequence) : nil
        result.stopID = position.hasStopID ? position.stopID : nil
        if position.hasCurrentStatus {
            result.currentStatus = ["INCOMING_AT", "STOPPED_AT", "IN_TRANSIT_TO"][safe: position.currentStatus.rawValue]
        }
        result.timestamp = position.hasTimestamp ? RealtimeBounds.instant(position.timestamp) : nil
        result.occupancyStatus = position.hasOccupancyStatus ? occupancyName(position.occupancyStatus.rawValue) : nil
        result.occupancyPercentage = position.hasOccupancyPercentage ? RealtimeBounds.percentage(position.occupancyPercentage) : nil
        if position.hasCongestionLevel {
            result.congestionLevel =
                ["UNKNOWN_CONGESTION_LEVEL", "RUNNING_SMOOTHLY", "STOP_AND_GO", "CONGESTION", "SEVERE_CONGESTION"][safe: position.congestionLevel.rawValue]
        }
        return result
    }

    static let occupancyNames = [
        "EMPTY", "MANY_SEATS_AVAILABLE", "FEW_SEATS_AVAILABLE", "STANDING_ROOM_ONLY", "CRUSHED_STANDING_ROOM_ONLY", "FULL",
        "NOT_ACCEPTING_PASSENGERS", "NO_DATA_AVAILABLE", "NOT_BOARDABLE",
    ]

    static func occupancyName(_ value: Int) -> String? { occupancyNames[safe: value] }

    public static let causeNames = [
        "", "UNKNOWN_CAUSE", "OTHER_CAUSE", "TECHNICAL_PROBLEM", "STRIKE", "DEMONSTRATION", "ACCIDENT", "HOLIDAY", "WEATHER", "MAINTENANCE",
        "CONSTRUCTION", "POLICE_ACTIVITY", "MEDICAL_EMERGENCY", "SPECIAL_EVENT",
    ]
    public static let effectNames = [
        "", "NO_SERVICE", "REDUCED_SERVICE", "SIGNIFICANT_DELAYS", "DETOUR", "ADDITIONAL_SERVICE", "MODIFIED_SERVICE", "OTHER_EFFECT",
        "UNKNOWN_EFFECT", "STOP_MOVED", "NO_EFFECT", "ACCESSIBILITY_ISSUE",
    ]
    static let severityNames = ["", "UNKNOWN_SEVERITY", "INFO", "WARNING", "SEVERE"]

    /// The English text of a translated string, else the untagged one, else the first.
    static func text(_ value: TransitRealtime_TranslatedString) -> String? {
        let translations = value.translation
        let chosen =
            translations.first { $0.hasLanguage && $0.language.lowercased().hasPrefix("en") }
            ?? translations.first { !$0.hasLanguage || $0.language.isEmpty } ?? translations.first
        return chosen.map(\.text)
    }

    static func alert(_ id: String, _ alert: TransitRealtime_Alert) -> RealtimeAlert {
        var result = RealtimeAlert(id: id)
        result.activePeriods = alert.activePeriod.map { period in
            RealtimeAlert.Period(
                start: period.hasStart ? RealtimeBounds.periodBound(period.start) : nil, end: period.hasEnd ? RealtimeBounds.periodBound(period.end) : nil)
        }
        result.informedEntities = alert.informedEntity.map { entity in
            RealtimeAlert.InformedEntity(
                agencyID: entity.hasAgencyID ? entity.agencyID : nil, routeID: entity.hasRouteID ? entity.routeID : nil,
                routeType: entity.hasRouteType ? RealtimeBounds.routeType(entity.routeType) : nil,
                directionID: entity.hasDirectionID ? RealtimeBounds.direction(entity.directionID) : nil,
                trip: entity.hasTrip ? descriptor(entity.trip) : nil, stopID: entity.hasStopID ? entity.stopID : nil)
        }
        result.cause = causeNames[safe: alert.cause.rawValue].flatMap { $0.isEmpty ? nil : $0 } ?? "UNKNOWN_CAUSE"
        result.effect = effectNames[safe: alert.effect.rawValue].flatMap { $0.isEmpty ? nil : $0 } ?? "UNKNOWN_EFFECT"
        result.severityLevel = severityNames[safe: alert.severityLevel.rawValue].flatMap { $0.isEmpty ? nil : $0 } ?? "UNKNOWN_SEVERITY"
        result.url = alert.hasURL ? text(alert.url) : nil
        result.header = alert.hasHeaderText ? text(alert.headerText) : nil
        result.description = alert.hasDescriptionText ? text(alert.descriptionText) : nil
        return result
    }
}

extension Array {
    subscript(safe index: Int) -> Element? {
        index >= 0 && index < count ? self[index] : nil
    }
}
