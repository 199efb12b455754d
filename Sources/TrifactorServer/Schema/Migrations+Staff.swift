package import Store

extension Schema {
    /// From 24 on: staff, the Trifactor users who may open the operator's console, each with a role (`read` or
    /// `write`, as admin keys have). One row per user, removed with the user; `granted_by` names who made them
    /// staff (`host:<login>`), for the operator reading the table.
    static let staff: [Migration] = [
        Migration(
            version: 24, name: "staff members of the operator's console",
            sql: """
                CREATE TABLE staff (
                  user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
                  role TEXT NOT NULL,
                  granted_by TEXT NOT NULL,
                  granted_at {{bigint}} NOT NULL
                );
                """)
    ]
}
