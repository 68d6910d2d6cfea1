import HeraldStorage
import HeraldTransit

/// Every migration of the server, in order: the shared list and the ones modules own.
public enum HeraldSchema {
    public static let migrations: [Migration] = (HeraldMigrations.all + TransitMigrations.all).sorted { $0.version < $1.version }
}
