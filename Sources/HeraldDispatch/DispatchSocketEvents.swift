import HeraldAuth
import HeraldCore
import HeraldRealtime
import Logging

/// Dispatch on the realtime protocols.
///
/// Rooms: a driver's sockets are in `driver:{id}` (offers, feed updates); customers' and
/// drivers' sockets follow `job:{id}` of their jobs that are not over (`job:status`,
/// `job:driver-assigned`). Socket.IO sockets are put there on connect and when a job is
/// booked or claimed; native clients subscribe to these channels, which only the job's
/// customer and driver (and operators) may.
/// Client → server: `location` (the dispatch app's `{lat, lng, accuracy, heading, speed, timestamp,
/// sequence}`; native: `{"type": "location", "payload": {…}, "sequence": N}`), answered
/// with an ack (Socket.IO) or `location_result` (native).
public struct DispatchSocketEvents: Sendable {
    let dispatch: DispatchService

    public init(dispatch: DispatchService) {
        self.dispatch = dispatch
    }

    public func install(socketIO: SocketIOServer, native: NativeRealtimeServer, channels: ChannelPolicy) {
        let dispatch = self.dispatch
        socketIO.onConnect { socket in
            guard let identity = socket.identity, socket.namespace == "/", !socket.recovered else { return }
            do {
                if identity.role == .driver { try await socket.join(DispatchService.driverRoom(identity.userID)) }
                for jobID in try await dispatch.jobs.activeJobIDs(identity.userID) { try await socket.join(RoomName.job(jobID)) }
            } catch {
                dispatch.logger.error("joining dispatch rooms failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
        socketIO.on("location") { socket, arguments, ack in
            guard let identity = socket.identity else {
                ack?(SocketValue(SocketErrorReply.json(.unauthorized, "Connect with a token.")))
                return
            }
            guard case .object(let object)? = arguments.first?.json else {
                ack?(SocketValue(SocketErrorReply.json(.validationFailed, "Send {lat, lng, …} as the first argument.")))
                return
            }
            ack?(SocketValue(await Self.report(dispatch, identity, object, sequence: nil)))
        }
        native.on("location") { connection, message in
            var answer: JSONValue
            if case .object(let payload)? = message["payload"] {
                answer = await Self.report(dispatch, connection.identity, payload, sequence: message["sequence"])
            } else {
                answer = SocketErrorReply.json(.validationFailed, "payload must be an object {latitude, longitude, …}")
            }
            guard case .object(var object) = answer else { return }
            // A refused sample is answered with the rideshare design's throttle message.
            object["type"] = object["status"] == "throttled" ? "throttle" : "location_result"
            if let requestID = message["request_id"] { object["request_id"] = requestID }
            connection.reply(.object(object))
        }
        channels.allow(prefix: "driver") { identity, channel in
            channel == DispatchService.driverRoom(identity.userID)
        }
        channels.allow(prefix: "job") { identity, channel in
            let jobID = String(channel.dropFirst(4))
            return try await dispatch.jobs.isParticipant(identity.userID, jobID: jobID)
        }
    }

    static func report(_ dispatch: DispatchService, _ identity: Identity, _ object: [String: JSONValue], sequence: JSONValue?) async -> JSONValue {
        guard identity.role == .driver else { return SocketErrorReply.json(.forbidden, "Only drivers report locations.") }
        do {
            let update = try LocationUpdate.parse(object, sequenceOverride: sequence)
            switch try await dispatch.drivers.reportLocation(identity.userID, update) {
            case .accepted:
                return ["status": "ok", "accepted": true]
            case .stale(let last):
                return ["status": "ok", "accepted": false, "reason": "stale_sequence", "last_sequence": .number(Double(last))]
            case .unknownDriver:
                return SocketErrorReply.json(.driverNotFound, "Create your driver profile first.")
            case .throttled(let throttle):
                return [
                    "status": "throttled", "accepted": false, "code": .string(ErrorCode.rateLimited.rawValue),
                    "message": "Too many location updates; slow down.",
                    "retry_after_ms": .number(Double(throttle.retryAfterMs)), "limit": .string(throttle.limit),
                ]
            }
        } catch let failure as APIError {
            return SocketErrorReply.json(failure)
        } catch {
            dispatch.logger.error("location report failed", metadata: ["error": "\(String(reflecting: error))"])
            return SocketErrorReply.internalError
        }
    }
}
