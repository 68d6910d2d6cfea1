import HeraldAuth
import HeraldCore
import HeraldRealtime

/// Trips on the realtime protocols.
///
/// `trip:{id}` carries `trip_state_changed`, `driver_location` and `eta_update`; only the
/// trip's rider, its driver and operators may follow it. Socket.IO sockets join the rooms of
/// their trips that are not over on connect and when a trip is made; after connecting (new
/// or recovered) each gets a `state_sync` per trip with the state and the latest driver
/// location, the same content the native `reconnect` answer carries. Driver locations arrive
/// through dispatch's `location` handlers and reach `TripLocationStream`, its `LocationObserver`.
public struct TripSocketEvents: Sendable {
    let trips: TripService

    public init(trips: TripService) {
        self.trips = trips
    }

    public func install(socketIO: SocketIOServer, native: NativeRealtimeServer, channels: ChannelPolicy) {
        let book = self.trips.book
        let logger = self.trips.logger
        // The rideshare design's `reconnect {trip_id}` names the trip's channel by the trip's id.
        channels.alias(field: "trip_id", prefix: "trip")
        channels.allow(prefix: "trip") { identity, channel in
            do {
                _ = try await book.trip(String(channel.dropFirst("trip:".count)), for: identity)
                return true
            } catch let error as APIError where error.status == 404 {
                return false
            }
        }
        native.stateSync(prefix: "trip") { identity, channel, clientState in
            try await book.stateSync(identity, channel: channel, clientState: clientState)
        }
        // A native client is put in its live trips' channels at once and told their state,
        // as a Socket.IO client is below: an app that lost its trip id finds its trip.
        native.onConnect { connection in
            do {
                for tripID in try await book.activeTripIDs(connection.identity.userID) {
                    await native.syncState(of: RoomName.trip(tripID), to: connection)
                }
            } catch {
                logger.error("sending trip state on connect failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
        socketIO.onConnect { socket in
            guard let identity = socket.identity, socket.namespace == "/" else { return }
            do {
                for tripID in try await book.activeTripIDs(identity.userID) {
                    let room = RoomName.trip(tripID)
                    if !socket.recovered { try await socket.join(room) }
                    var sync = try await book.stateSync(identity, channel: room, clientState: nil)
                    sync["channel"] = .string(room)
                    sync["recovered"] = .bool(socket.recovered)
                    sync["reason"] = "connect"
                    socket.emit("state_sync", [SocketValue(.object(sync))])
                }
            } catch {
                logger.error("joining trip rooms failed", metadata: ["error": "\(String(reflecting: error))"])
            }
        }
    }
}
