import Foundation
import HeraldCore
import HeraldTransit
import Hummingbird

/// What a rider does with an alert push (the transit design's): the read receipt and the
/// SERVICE_ALERT category's MUTE_24H action.
extension TransitRoutes {
    func muteJSON(_ record: AlertMuteRecord) -> JSONValue {
        ["kind": .string(record.kind.rawValue), "id": .string(record.entityID), "until": .string(Timestamp.string(epochMilliseconds: record.until))]
    }

    func addAlertActionRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.post("/alerts/{id}/opened") { _, context in
            let identity = try context.requireIdentity()
            _ = try await alertActions.opened(userID: identity.userID, alertID: try Self.alertID(context))
            return Response(status: .noContent)
        }
        api.post("/alerts/{id}/mute") { request, context in
            let identity = try context.requireIdentity()
            let id = try Self.alertID(context)
            var hours: Int?
            var scope = AlertMuteScope.alert
            if request.headers[.contentLength].map({ $0 != "0" }) ?? (request.headers[.contentType] != nil) {
                let body = try await request.jsonObject(context: context)
                var r = FieldReader(body)
                r.refuseUnknown(["hours", "scope"])
                hours = r.integer("hours", range: 1...720)
                if let text = r.string("scope", maxLength: 16) {
                    if let chosen = AlertMuteScope(rawValue: text) { scope = chosen } else { r.fail("scope", "must be alert or routes") }
                }
                try r.validate()
            }
            let muted = try await alertActions.mute(userID: identity.userID, alertID: id, hours: hours, scope: scope)
            return try respond(["alert_id": .string(id), "muted": .array(muted.map(muteJSON))], status: .created, context)
        }
        api.delete("/alerts/{id}/mute") { _, context in
            let identity = try context.requireIdentity()
            try await alertActions.unmute(userID: identity.userID, alertID: try Self.alertID(context))
            return Response(status: .noContent)
        }
        api.get("/alerts/mutes") { _, context in
            let identity = try context.requireIdentity()
            let mutes = try await alertActions.activeMutes(userID: identity.userID)
            return try respond(["mutes": .array(mutes.map(muteJSON))], headers: [.cacheControl: "private, no-cache"], context)
        }
    }

    /// An alert id from the path: 1 to 200 bytes.
    static func alertID(_ context: HeraldRequestContext) throws -> String {
        let id = try pathID(context)
        guard (1...200).contains(id.utf8.count) else {
            throw APIError.validation([FieldError(field: "id", message: "must be an alert id of 1 to 200 bytes")])
        }
        return id
    }
}
