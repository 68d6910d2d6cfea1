import SQLKit

/// What other modules read of dispatch's jobs inside their own transactions: trips ask
/// whether a driver is busy with a job (drivers' records: `DriverDirectory`). The stores stay
/// inside this module.
extension DispatchService {
    /// Whether the user holds a dispatch job that is not finished.
    public func hasActiveJob(_ db: any SQLDatabase, userID: String) async throws -> Bool {
        try await !JobStore().activeJobIDs(db, userID: userID).isEmpty
    }
}
