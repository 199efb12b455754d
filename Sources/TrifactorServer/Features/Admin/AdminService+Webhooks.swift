import Core

extension AdminService {
    /// Every webhook endpoint, oldest first; audited as a read.
    func webhooks(actor: Actor) throws -> [WebhookEndpoint] {
        let now = clock.now().millis
        return try transactions.write { db in
            let all = try WebhookRepository.all(on: db)
            try AuditLog.append(actor.event(.adminRead, nil, "webhooks count=\(all.count)"), at: now, on: db)
            return all
        }
    }

    /// One webhook endpoint with its undelivered and failed message counts; audited as a read.
    /// - Throws: `WebhookFailure.notFound`.
    func webhook(_ id: String, actor: Actor) throws -> (WebhookEndpoint, undelivered: Int, failed: Int) {
        let now = clock.now().millis
        return try transactions.write { db in
            guard let endpoint = try WebhookRepository.find(id, on: db) else { throw WebhookFailure.notFound }
            let counts = try WebhookRepository.counts(id, on: db)
            try AuditLog.append(actor.event(.adminRead, nil, "webhook=\(id)"), at: now, on: db)
            return (endpoint, counts.pending, counts.failed)
        }
    }
}
