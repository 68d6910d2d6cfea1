import SQLKit

extension SQLDatabase {
    /// One page of `table`'s rows matching `filter` (SQL starting with ` WHERE`), with the
    /// total count, for the list endpoints' `{items, total}` answers.
    public func page<T: Decodable>(
        _ type: T.Type, from table: String, where filter: SQLQueryString, orderBy: String, offset: Int, limit: Int
    ) async throws -> (rows: [T], total: Int) {
        var count = SQLQueryString("SELECT COUNT(*) AS n FROM ")
        count.appendInterpolation(ident: table)
        count += filter
        let total = try await raw(count).first()?.decode(column: "n", as: Int.self) ?? 0
        var page = SQLQueryString("SELECT * FROM ")
        page.appendInterpolation(ident: table)
        page += filter
        page.appendInterpolation(unsafeRaw: " ORDER BY \(orderBy) LIMIT ")
        page.appendInterpolation(bind: limit)
        page.appendInterpolation(unsafeRaw: " OFFSET ")
        page.appendInterpolation(bind: offset)
        return (try await raw(page).all(decoding: T.self), total)
    }
}
