import SQLKit

/// What other modules read or change of dispatch's tables, inside their own transactions:
/// trips show the assigned driver, count a rider's rating into the driver's, and ask whether
/// a driver is busy with a job. The stores stay inside this module.
extension DispatchService {
    /// The driver's record (name, rating, approval), if they are one.
    public func driver(_ db: any SQLDatabase, userID: String) async throws -> DriverRecord? {
        try await DriverStore().find(db, userID: userID)
    }

    /// Adds one rating (1–5) to the driver's average.
    public func addRating(_ db: any SQLDatabase, driverID: String, rating: Int) async throws {
        try await DriverStore().addRating(db, userID: driverID, rating: rating)
    }

    /// Whether the user holds a dispatch job that is not finished.
    public func hasActiveJob(_ db: any SQLDatabase, userID: String) async throws -> Bool {
        try await !JobStore().activeJobIDs(db, userID: userID).isEmpty
    }
}
