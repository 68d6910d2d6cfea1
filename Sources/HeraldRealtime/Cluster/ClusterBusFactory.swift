import HeraldStorage
import Logging
import ServiceLifecycle

/// Chooses how a node's hub hears the other nodes, from the database it runs on.
///
/// Why the database decides: nodes that share a PostgreSQL database are a cluster and use its
/// LISTEN/NOTIFY (`PostgresBus`); an embedded SQLite database is one process, so the bus is
/// local. A future bus engine (Redis, NATS) plugs in here and nowhere else.
public enum ClusterBusFactory {
    /// Attaches the chosen bus to `hub`; returns the service that runs it, if it needs one.
    public static func attach(to hub: RealtimeHub, database: any Database, nodeID: String, logger: Logger) -> (any Service)? {
        if let postgres = database as? PostgresDatabase {
            let bus = PostgresBus(hub: hub, client: postgres.client, nodeID: nodeID, logger: logger)
            hub.attach(bus: bus)
            return bus
        }
        hub.attach(bus: LocalBus(hub: hub))
        return nil
    }
}
