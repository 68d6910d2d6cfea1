import Foundation
import HeraldCore

/// How jobs, drivers and offers look to clients.
public enum DispatchJSON {
    static func time(_ ms: Int64?) -> JSONValue { ms.map { .string(Timestamp.string(epochMilliseconds: $0)) } ?? .null }
    static func number(_ value: Double?) -> JSONValue { value.map(JSONValue.number) ?? .null }
    static func integer<T: BinaryInteger>(_ value: T?) -> JSONValue { value.map { .number(Double($0)) } ?? .null }

    public static func job(_ job: JobRecord, driver: DriverRecord? = nil, distanceMeters: Double? = nil) -> JSONValue {
        let items = (try? JSONDecoder().decode([JobItem].self, from: Data(job.items.utf8))) ?? []
        let lines = (try? JSONDecoder().decode([PriceLine].self, from: Data(job.priceLines.utf8))) ?? []
        var object: [String: JSONValue] = [
            "id": .string(job.id), "job_id": .string(job.id), "customer_id": .string(job.customerID),
            "driver_id": job.driverID.map(JSONValue.string) ?? .null, "status": .string(job.status.rawValue),
            "address": .string(job.address), "lat": number(job.latitude), "lng": number(job.longitude),
            "items": .array(items.map { ["category": .string($0.category), "quantity": .number(Double($0.quantity))] }),
            "volume_estimate": job.volumeHundredths.map { .number(Double($0) / 100) } ?? .null,
            "scheduled_at": time(job.scheduledAt), "notes": job.notes.map(JSONValue.string) ?? .null,
            "price": [
                "amount_minor": .number(Double(job.priceMinor)), "currency": .string(job.currency),
                "lines": .array(
                    lines.map { line in
                        var entry: [String: JSONValue] = ["code": .string(line.code), "amount_minor": .number(Double(line.amountMinor))]
                        if let quantity = line.quantity { entry["quantity"] = .number(Double(quantity)) }
                        if let unit = line.unitMinor { entry["unit_minor"] = .number(Double(unit)) }
                        return .object(entry)
                    }),
            ],
            "total_price": .number(Double(job.priceMinor) / 100),
            "offer_round": .number(Double(job.offerRound)), "offer_radius_m": integer(job.offerRadiusM),
            "offer_expires_at": time(job.nextRoundAt),
            "created_at": time(job.createdAt), "updated_at": time(job.updatedAt), "accepted_at": time(job.acceptedAt),
            "en_route_at": time(job.enRouteAt), "arrived_at": time(job.arrivedAt), "started_at": time(job.startedAt),
            "completed_at": time(job.completedAt), "cancelled_at": time(job.cancelledAt), "expired_at": time(job.expiredAt),
            "cancelled_by": job.cancelledBy.map(JSONValue.string) ?? .null,
        ]
        if let driver { object["driver"] = driverSummary(driver) }
        if let distanceMeters {
            object["distance_m"] = .number(distanceMeters.rounded())
            object["distance_km"] = .number((distanceMeters / 100).rounded() / 10)
        }
        return .object(object)
    }

    /// What a customer sees of their driver (the dispatch design's `job:driver-assigned`).
    public static func driverSummary(_ driver: DriverRecord) -> JSONValue {
        [
            "id": .string(driver.userID), "name": .string(driver.name), "truck_type": .string(driver.truckType),
            "vehicle_description": driver.vehicleDescription.map(JSONValue.string) ?? .null,
            "license_plate": driver.licensePlate.map(JSONValue.string) ?? .null,
            "photo_url": driver.photoURL.map(JSONValue.string) ?? .null,
            "avg_rating": number(driver.averageRating), "total_jobs": .number(Double(driver.completedJobs)),
        ]
    }

    /// The driver's own view, and the operators'.
    public static func driver(_ driver: DriverRecord) -> JSONValue {
        guard case .object(var object) = driverSummary(driver) else { return .null }
        object["user_id"] = .string(driver.userID)
        object["phone"] = driver.phone.map(JSONValue.string) ?? .null
        object["approval_status"] = .string(driver.approval.rawValue)
        object["approval_reason"] = driver.approvalReason.map(JSONValue.string) ?? .null
        object["approval_changed_at"] = time(driver.approvalChangedAt)
        object["online"] = .bool(driver.isOnline)
        object["location"] =
            driver.latitude.flatMap { lat in
                driver.longitude.map { lng in
                    .object([
                        "lat": .number(lat), "lng": .number(lng), "accuracy": number(driver.accuracyM), "heading": number(driver.heading),
                        "speed": number(driver.speedMps), "sequence": integer(driver.locationSeq), "received_at": time(driver.locationAt),
                    ])
                }
            } ?? .null
        object["created_at"] = time(driver.createdAt)
        object["updated_at"] = time(driver.updatedAt)
        return .object(object)
    }

    public static func offer(_ offer: OfferRecord) -> JSONValue {
        [
            "driver_id": .string(offer.driverID), "round": .number(Double(offer.round)), "distance_m": integer(offer.distanceM),
            "channel": .string(offer.channel.rawValue), "notification_id": offer.notificationID.map(JSONValue.string) ?? .null,
            "offered_at": time(offer.offeredAt), "outcome": offer.outcome.map { .string($0.rawValue) } ?? .null,
        ]
    }

    /// What `volume:*` events carry to both apps: amounts in minor units, plus the
    /// price-adjustment design's `new_price` in major units for clients written against it.
    public static func adjustmentEvent(_ a: AdjustmentRecord) -> [String: JSONValue] {
        [
            "job_id": .string(a.jobID), "status": .string(a.status.rawValue), "automatic": .bool(a.automatic != 0),
            "actual_volume": .number(DisplayFormat.yardsValue(a.actualVolumeHundredths)),
            "original_volume": a.originalVolumeHundredths.map { .number(DisplayFormat.yardsValue($0)) } ?? .null,
            "original_price_minor": .number(Double(a.originalPriceMinor)), "new_price_minor": .number(Double(a.newPriceMinor)),
            "new_price": .number(Double(a.newPriceMinor) / 100), "currency": .string(a.currency),
            "deadline_at": time(a.deadlineAt), "extensions": .number(Double(a.extensions)),
        ]
    }

    /// A volume adjustment as the REST routes show it: the event's fields, the quote's lines
    /// and the decision; `now` adds `expired` (pending past its deadline).
    public static func adjustment(_ a: AdjustmentRecord, now: Int64?) -> JSONValue {
        let lines = (try? JSONDecoder().decode([PriceLine].self, from: Data(a.priceLines.utf8))) ?? []
        var object = adjustmentEvent(a)
        object["lines"] = .array(lines.map { ["code": .string($0.code), "amount_minor": .number(Double($0.amountMinor))] })
        object["trip_fee_minor"] = integer(a.tripFeeMinor)
        // A decline without a trip fee is the one that kept the job at its booked price.
        object["proceed_at_original_price"] = .bool(a.status == .declined && a.tripFeeMinor == nil)
        object["expired_at"] = time(a.expiredAt)
        object["decided_at"] = time(a.decidedAt)
        object["decided_by"] = a.decidedBy.map(JSONValue.string) ?? .null
        object["created_at"] = time(a.createdAt)
        if let now {
            object["expired"] = .bool(a.status == .pending && (a.deadlineAt ?? .max) <= now)
        }
        return .object(object)
    }

    /// A job's payment hold: what is held, what a capture will take, what was taken.
    public static func payment(_ hold: HoldRecord) -> JSONValue {
        [
            "provider": .string(hold.provider), "status": .string(hold.status.rawValue), "currency": .string(hold.currency),
            "authorized_minor": .number(Double(hold.authorizedMinor)), "amount_minor": .number(Double(hold.amountMinor)),
            "captured_minor": .number(Double(hold.capturedMinor)), "pending_operation": hold.pendingOp.map(JSONValue.string) ?? .null,
            "last_error": hold.lastError.map(JSONValue.string) ?? .null,
            // A job booked past an authorisation's lifetime: when its hold will be taken.
            "hold_at": hold.isScheduled && hold.pendingOp != nil ? time(hold.nextAttemptAt) : .null,
        ]
    }
}
