import Foundation
import HeraldCore
import HeraldGTFS
import HeraldNotifications
import HeraldStorage
import HeraldTransit
import Hummingbird

/// Favourites and the transit app's device registration (`/user/device`).
extension TransitRoutes {
    func favoriteJSON(_ record: FavoriteRecord, _ name: String?) -> JSONValue {
        let current = transit.snapshot
        let zone = record.routeID.flatMap { current.route($0)?.feed.timetable.zone } ?? current.stop(record.stopID)?.feed.timetable.zone
        return TransitJSON.favorite(record, name: name, zone: zone)
    }

    /// `route_ids`: null (every route at the stop) or 1 to 50 route ids.
    static func routeList(_ body: [String: JSONValue], _ r: inout FieldReader) -> [String]?? {
        guard let value = body["route_ids"] else { return nil }
        if value == .null { return .some(nil) }
        guard case .array(let items) = value, (1...TransitFavorites.maxFavoriteRoutes).contains(items.count) else {
            r.fail("route_ids", "must be null or a list of 1 to \(TransitFavorites.maxFavoriteRoutes) route ids")
            return nil
        }
        var routes: [String] = []
        for item in items {
            guard case .string(let id) = item, (1...200).contains(id.utf8.count) else {
                r.fail("route_ids", "each must be a route id of 1 to 200 bytes")
                return nil
            }
            routes.append(id)
        }
        return .some(routes)
    }

    func addUserRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.get("/favorites") { _, context in
            let identity = try context.requireIdentity()
            let favorites = try await transit.favorites.list(userID: identity.userID)
            return try respond(
                ["favorites": .array(favorites.map { favoriteJSON($0.record, $0.stopName) })], headers: [.cacheControl: "private, no-cache"], context)
        }
        api.post("/favorites") { request, context in
            let identity = try context.requireIdentity()
            let body = try await request.jsonObject(context: context)
            var r = FieldReader(body)
            r.refuseUnknown(["stop_id", "route_id", "route_ids", "label", "notifications_enabled"])
            let stopID = r.string("stop_id", maxLength: 200)
            let routeID = r.string("route_id", maxLength: 200)
            let routes = Self.routeList(body, &r)
            let label = r.string("label", maxLength: 100)
            let enabled = r.bool("notifications_enabled") ?? true
            if (stopID == nil) == (routeID == nil) { r.fail("stop_id", "give stop_id or route_id, not both") }
            if routeID != nil, routes != nil { r.fail("route_ids", "narrows a stop favourite; a route favourite is the whole route") }
            try r.validate()
            let place: TransitFavorites.FavoritePlace = routeID.map { .route($0) } ?? .stop(stopID!, routes: routes ?? nil)
            let (record, name) = try await transit.favorites.add(userID: identity.userID, place: place, label: label, notificationsEnabled: enabled)
            return try respond(favoriteJSON(record, name), status: .created, headers: [.location: "/api/v1/favorites/\(record.id)"], context)
        }
        api.patch("/favorites/{id}") { request, context in
            let identity = try context.requireIdentity()
            let id = try Self.pathID(context)
            let body = try await request.jsonObject(context: context)
            var r = FieldReader(body)
            r.refuseUnknown(["label", "notifications_enabled", "sort_order", "route_ids"])
            var label: String??
            if body.keys.contains("label") { label = .some(body["label"] == .null ? nil : r.string("label", maxLength: 100)) }
            let enabled = r.bool("notifications_enabled")
            let order = r.integer("sort_order", range: 0...(TransitFavorites.maxFavorites - 1))
            let routes = Self.routeList(body, &r)
            if body.isEmpty { r.fail("body", "give label, notifications_enabled, sort_order or route_ids") }
            try r.validate()
            let (record, name) = try await transit.favorites.update(
                userID: identity.userID, id: id, label: label, notificationsEnabled: enabled, sortOrder: order, routeIDs: routes)
            return try respond(favoriteJSON(record, name), context)
        }
        api.delete("/favorites/{id}") { _, context in
            let identity = try context.requireIdentity()
            try await transit.favorites.delete(userID: identity.userID, id: try Self.pathID(context))
            return Response(status: .noContent)
        }
        api.post("/user/device") { request, context in
            let identity = try context.requireIdentity()
            let body = try await request.jsonObject(context: context)
            var r = FieldReader(body)
            r.refuseUnknown(["apns_token", "device_id", "platform", "app_version", "os_version", "locale"])
            let token = r.string("apns_token", maxLength: 4096, required: true)
            try r.validate()
            // The transit app's body is an APNs registration: Herald's /push/register does the rest.
            var registration = body
            registration.removeValue(forKey: "apns_token")
            registration["token"] = .string(token!)
            registration["provider"] = "apns"
            if registration["platform"] == nil { registration["platform"] = "ios" }
            let device: DeviceRecord
            do {
                device = try await registry.register(userID: identity.userID, body: registration, userAgent: request.headers[.userAgent]).device
            } catch var error as APIError {
                // Errors name the transit app's field.
                error.renameFields(["token": "apns_token"])
                throw error
            }
            return try respond(
                [
                    "device_id": .string(device.id), "registered_at": .string(Timestamp.string(epochMilliseconds: device.createdAt)),
                    "platform": .string(device.platform.rawValue),
                ],
                status: .created, context)
        }
    }
}
