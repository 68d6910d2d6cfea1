import HeraldStorage

/// HeraldPayments' tables: the `ledger` provider's book, and the customer each user has at a
/// card provider. Append new migrations; never edit one that has shipped (nor rename the
/// module, `ledger`, which every database has recorded).
public enum LedgerMigrations {
    public static let set = MigrationSet(
        module: "ledger",
        migrations: [
            Migration(
                version: 1, name: "ledger", legacyVersion: 6,
                statements: [
                    // The `ledger` provider's own book: holds and every entry against them, with
                    // idempotency keys (a repeated call returns the first result).
                    """
                    CREATE TABLE ledger_holds (
                        reference TEXT PRIMARY KEY,
                        job_id TEXT NOT NULL,
                        customer_id TEXT NOT NULL,
                        status TEXT NOT NULL,
                        authorized_minor BIGINT NOT NULL,
                        amount_minor BIGINT NOT NULL,
                        captured_minor BIGINT NOT NULL,
                        currency TEXT NOT NULL,
                        payment_method TEXT,
                        created_at BIGINT NOT NULL,
                        updated_at BIGINT NOT NULL
                    )
                    """,
                    """
                    CREATE TABLE ledger_entries (
                        id TEXT PRIMARY KEY,
                        reference TEXT NOT NULL,
                        operation TEXT NOT NULL,
                        amount_minor BIGINT NOT NULL,
                        idempotency_key TEXT NOT NULL UNIQUE,
                        result TEXT NOT NULL,
                        created_at BIGINT NOT NULL
                    )
                    """,
                    "CREATE INDEX ledger_entries_reference ON ledger_entries (reference, created_at)",
                ]
            ),
            Migration(
                version: 2, name: "payment customers",
                statements: [
                    // The provider's customer for each Herald user (Stripe `cus_…`): a saved card is
                    // attached to it, and only a card attached to a customer can be charged again
                    // (a re-authorisation, an off-session hold). One per user and provider, so two
                    // nodes creating one at once keep the same (`PaymentCustomerStore`).
                    """
                    CREATE TABLE payment_customers (
                        provider TEXT NOT NULL,
                        user_id TEXT NOT NULL,
                        customer_id TEXT NOT NULL,
                        created_at BIGINT NOT NULL,
                        PRIMARY KEY (provider, user_id)
                    )
                    """
                ]
            ),
        ])
}
