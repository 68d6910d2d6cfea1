import Foundation
import HeraldCore
import HeraldGTFS
import HeraldTransit
import Hummingbird
import NIOCore

/// Realtime intake for backends and feed imports for operators.
extension TransitRoutes {
    func addBackendRoutes(to api: RouterGroup<HeraldRequestContext>) {
        api.post("/transit/realtime") { request, context in
            _ = try context.require(.service, .operator)
            var q = QueryReader(request)
            let feedName = q.raw("feed") ?? transit.served.defaultFeedName
            let source = q.raw("source") ?? TransitRealtime.pushSource(feed: feedName)
            if !TransitConfig.isValidName(feedName) {
                q.validator.fail("feed", "must be a feed name")
            } else if feedName != transit.served.defaultFeedName, !transit.config.feeds.contains(where: { $0.name == feedName }),
                transit.snapshot.feed(feedName) == nil
            {
                // A message for a feed nobody configured or imported would be stored and
                // loaded at every start for nothing.
                q.validator.fail("feed", "names no configured or imported feed")
            }
            if !TransitConfig.isValidName(source) { q.validator.fail("source", "must be 1 to 64 characters of a-z, 0-9, - and _") }
            if transit.config.realtime.contains(where: { $0.name == source }) { q.validator.fail("source", "is a polled source; post under another name") }
            try q.validate()
            let payload = try await Self.body(request, context)
            let feed: RealtimeFeed
            do {
                feed = try await transit.realtime.ingest(source: source, feed: feedName, payload: payload)
            } catch let error as RealtimeFeedDecoder.DecodeError {
                switch error {
                case .malformed: throw TransitError.invalidFeedMessage("it does not parse as protobuf")
                case .missingHeader: throw TransitError.invalidFeedMessage("the header (gtfs_realtime_version) is missing")
                case .tooLarge(let limit): throw APIError.payloadTooLarge(limit: limit)
                }
            }
            let unmatched = transit.snapshot.feed(feedName)?.overlay.unmatched
            return try respond(
                [
                    "source": .string(source), "feed": .string(feedName), "trip_updates": .number(Double(feed.tripUpdates.count)),
                    "vehicles": .number(Double(feed.vehicles.count)), "alerts": .number(Double(feed.alerts.count)),
                    "feed_timestamp": feed.timestamp.map { .string(Timestamp.string(epochMilliseconds: $0 * 1000)) } ?? .null,
                    "unmatched": unmatched.map { .number(Double($0)) } ?? .null,
                ], context)
        }
        api.post("/transit/feeds/{name}/import") { request, context in
            let identity = try context.require(.operator)
            let name = try Self.pathID(context, "name")
            guard TransitConfig.isValidName(name) else { throw APIError.validation(field: "name", "a feed name is 1 to 64 characters of a-z, 0-9, - and _") }
            let source: FeedImporter.Source
            var force = false
            let type = request.headers[.contentType].map(BodyLimitMiddleware.mediaType) ?? ""
            if type == "application/zip" || type == "application/octet-stream" {
                // An upload says `?force=true` (its body is the zip).
                var query = QueryReader(request)
                force = query.bool("force") ?? false
                try query.validate()
                source = .zip(try await Self.body(request, context), description: "upload by \(identity.userID)")
            } else {
                let body = try await DispatchRoutes.optionalBody(request, context)
                var r = FieldReader(body)
                r.refuseUnknown(["url", "force"])
                let url = r.string("url", maxLength: 2000)
                force = r.bool("force") ?? false
                if let url, !(url.hasPrefix("https://") || url.hasPrefix("http://")) { r.fail("url", "must be an http(s) URL") }
                let configured = transit.config.feeds.first { $0.name == name }
                let parts = configured?.parts ?? []
                if url == nil && configured?.url == nil && parts.isEmpty {
                    r.fail("url", "is required: the feed has no URL configured (or upload the zip as application/zip)")
                }
                try r.validate()
                if let url = url ?? configured?.url {
                    source = .url(url)
                } else {
                    // A region without a URL given: its configured parts, fetched and merged.
                    source = .region(parts.map { FeedImporter.RegionPart(name: $0.name, source: .url($0.url)) })
                }
            }
            let record = try await imports.enqueue(feed: name, source: source, requestedBy: identity.userID, force: force)
            return try respond(
                Self.importJSON(record), status: .accepted, headers: [.location: "/api/v1/transit/imports/\(record.id)"], context)
        }
        api.get("/transit/imports/{id}") { _, context in
            _ = try context.require(.operator, .service)
            guard let record = try await transit.feeds.importRecord(try Self.pathID(context)) else { throw TransitError.importNotFound }
            return try respond(Self.importJSON(record), context)
        }
    }

    /// A body that is not JSON (a protobuf, a zip), within the route's limit.
    static func body(_ request: Request, _ context: HeraldRequestContext) async throws -> Data {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: context.maxBodyBytes)
        } catch is NIOTooManyBytesError {
            throw APIError.payloadTooLarge(limit: context.maxBodyBytes)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw APIError.payloadTooLarge(limit: context.maxBodyBytes)
        }
        guard buffer.readableBytes > 0 else { throw APIError.validation(field: "body", "is empty") }
        return Data(buffer: buffer)
    }

    static func importJSON(_ record: ImportRecord) -> JSONValue {
        func time(_ ms: Int64?) -> JSONValue { ms.map { .string(Timestamp.string(epochMilliseconds: $0)) } ?? .null }
        var report: JSONValue = .null
        if let text = record.report, let value = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) { report = value }
        return [
            "id": .string(record.id), "feed": .string(record.feedName), "status": .string(record.status.rawValue), "source": .string(record.source),
            "version_id": record.versionID.map(JSONValue.string) ?? .null, "error": record.error.map(JSONValue.string) ?? .null, "report": report,
            "requested_by": record.requestedBy.map(JSONValue.string) ?? .null, "created_at": time(record.createdAt), "finished_at": time(record.finishedAt),
        ]
    }
}
