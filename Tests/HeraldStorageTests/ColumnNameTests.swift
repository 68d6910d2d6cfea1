import HeraldStorage
import Testing

/// The one rule that names a record's columns; every store's rows decode by it (their tests
/// read real rows on SQLite and PostgreSQL), so a column no rule gives must keep its name in
/// a `CodingKeys`, which the rule leaves as it is.
struct ColumnNameTests {
    @Test(arguments: [
        ("id", "id"), ("customerID", "customer_id"), ("providerMessageID", "provider_message_id"), ("baseURL", "base_url"),
        ("webpushP256dh", "webpush_p256dh"), ("latencyMs", "latency_ms"), ("offerRadiusM", "offer_radius_m"),
        ("URLPath", "url_path"), ("etaUpdateThresholdSeconds", "eta_update_threshold_seconds"),
        ("until_at", "until_at"), ("n", "n"),
    ])
    func propertiesNameTheirColumns(property: String, column: String) {
        #expect(ColumnName.of(property) == column)
    }
}
