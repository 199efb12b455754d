import Core

extension AdminService {
    /// Every OpenID Provider client, oldest first; audited as a read.
    func clients(actor: Actor) throws -> [OIDCClient] {
        let now = clock.now().millis
        return try transactions.write { db in
            let all = try ClientRepository.all(on: db)
            try AuditLog.append(actor.event(.adminRead, nil, "clients count=\(all.count)"), at: now, on: db)
            return all
        }
    }

    /// One OpenID Provider client; audited as a read.
    /// - Throws: `ClientFailure.notFound`.
    func client(_ id: String, actor: Actor) throws -> OIDCClient {
        let now = clock.now().millis
        return try transactions.write { db in
            guard let client = try ClientRepository.managed(id, on: db) else { throw ClientFailure.notFound }
            try AuditLog.append(actor.event(.adminRead, nil, "client=\(id)"), at: now, on: db)
            return client
        }
    }
}
