import HeraldAuth
import HeraldDispatch
import HeraldIdempotency
import HeraldNotifications
import HeraldPayments
import HeraldRealtime
import HeraldStorage
import HeraldTransit
import HeraldTrips

/// The server's schema: each module's migrations, in the order they run (a module's tables
/// never depend on a later module's).
public enum HeraldSchema {
    public static let sets: [MigrationSet] = [
        UserMigrations.set, IdempotencyMigrations.set, RealtimeMigrations.set, NotificationMigrations.set, LedgerMigrations.set,
        DispatchMigrations.set, TripMigrations.set, TransitMigrations.set,
    ]

    public static var migrator: Migrator { Migrator(sets: sets) }
}
