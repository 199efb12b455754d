package import Store

/// The bank's own database (never trifactord's): customers, accounts, the
/// double-entry ledger and its transfers. Amounts are integer
/// minor units. Two system accounts per currency close the books: `opening`
/// (where opening balances come from) and `clearing` (where payments to
/// other banks go); only they may go below zero. The browsers the bank
/// recognises (`KnownBrowsers`), whose customer's sitekey they may show.
package enum BankSchema {
    package static let migrations: [Migration] = [
        Migration(
            version: 1, name: "customers, accounts, ledger",
            sql: """
                CREATE TABLE bank_customers (
                  id TEXT PRIMARY KEY,
                  email TEXT NOT NULL UNIQUE,
                  name TEXT NOT NULL,
                  phone TEXT NOT NULL,
                  sitekey_picture TEXT NOT NULL,
                  sitekey_phrase TEXT NOT NULL,
                  created_at {{bigint}} NOT NULL
                );
                CREATE TABLE bank_accounts (
                  id TEXT PRIMARY KEY,
                  customer_id TEXT REFERENCES bank_customers(id),
                  kind TEXT NOT NULL CHECK (kind IN ('checking', 'saving', 'opening', 'clearing')),
                  name TEXT NOT NULL,
                  currency TEXT NOT NULL,
                  balance {{bigint}} NOT NULL,
                  created_at {{bigint}} NOT NULL,
                  CHECK (kind IN ('opening', 'clearing') OR balance >= 0)
                );
                CREATE INDEX bank_accounts_customer ON bank_accounts(customer_id);
                CREATE TABLE bank_transfers (
                  id TEXT PRIMARY KEY,
                  idempotency_key TEXT NOT NULL UNIQUE,
                  from_account TEXT NOT NULL REFERENCES bank_accounts(id),
                  to_account TEXT NOT NULL REFERENCES bank_accounts(id),
                  amount {{bigint}} NOT NULL CHECK (amount > 0),
                  currency TEXT NOT NULL,
                  payee_name TEXT,
                  payee_iban TEXT,
                  authorization_id TEXT UNIQUE,
                  memo TEXT NOT NULL,
                  created_at {{bigint}} NOT NULL
                );
                CREATE TABLE bank_entries (
                  id {{id}},
                  transfer_id TEXT NOT NULL REFERENCES bank_transfers(id),
                  account_id TEXT NOT NULL REFERENCES bank_accounts(id),
                  amount {{bigint}} NOT NULL,
                  balance_after {{bigint}} NOT NULL,
                  created_at {{bigint}} NOT NULL
                );
                CREATE INDEX bank_entries_account ON bank_entries(account_id, id);
                INSERT INTO bank_accounts (id, customer_id, kind, name, currency, balance, created_at)
                  VALUES ('opening-EUR', NULL, 'opening', 'Opening balances', 'EUR', 0, 0);
                INSERT INTO bank_accounts (id, customer_id, kind, name, currency, balance, created_at)
                  VALUES ('clearing-EUR', NULL, 'clearing', 'Payments to other banks', 'EUR', 0, 0);
                """),
        // A browser is kept by the SHA-256 of its cookie, tied to one customer, until it expires.
        Migration(
            version: 2, name: "browsers the bank recognises",
            sql: """
                CREATE TABLE bank_browsers (
                  id TEXT PRIMARY KEY,
                  customer_id TEXT NOT NULL REFERENCES bank_customers(id),
                  created_at {{bigint}} NOT NULL,
                  expires_at {{bigint}} NOT NULL
                );
                CREATE INDEX bank_browsers_customer ON bank_browsers(customer_id, expires_at);
                """),
        // Each customer account's IBAN (given at opening; accounts opened before get theirs at start-up,
        // `Ledger.assignMissingIBANs`), and a transfer's reference, shown on both statements.
        Migration(
            version: 3, name: "IBANs and references",
            sql: """
                ALTER TABLE bank_accounts ADD COLUMN iban TEXT;
                CREATE UNIQUE INDEX bank_accounts_iban ON bank_accounts(iban);
                ALTER TABLE bank_transfers ADD COLUMN reference TEXT;
                """),
        // Staff who may use "bank by phone" (`trifactor-bank staff add EMAIL`), by the email they sign in with.
        Migration(
            version: 4, name: "staff",
            sql: """
                CREATE TABLE bank_staff (
                  email TEXT PRIMARY KEY,
                  added_at {{bigint}} NOT NULL
                );
                """),
        // The Trifactor user a customer signs in as on the standard path (the ID token's `sub`), taken at their first
        // sign-in there: from then on the customer is found by it, not by an email address that may change hands.
        Migration(
            version: 5, name: "customers' Trifactor subjects",
            sql: """
                ALTER TABLE bank_customers ADD COLUMN trifactor_subject TEXT;
                CREATE UNIQUE INDEX bank_customers_subject ON bank_customers(trifactor_subject);
                """),
    ]
}
