import API
import Core
import Crypto
import Foundation
import Store
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

@Suite("Schema upgrades keep what was written before")
struct SchemaUpgradeTests {
    @Test(
        "a device enrolled before approval keys (schema 12) reads, after the upgrade, as one key that is not approval-bound",
        arguments: Backend.all)
    func deviceBeforeApprovalKeys(backend: Backend) throws {
        try backend.withFreshDatabase { db, _ throws in
            let before = Schema.migrations.filter { $0.version <= 12 }
            #expect(try db.migrate(before).last == 12)
            let key = try DeviceKey().publicKey
            try db.transaction { connection in
                try connection.execute(
                    "INSERT INTO users (id, email, password_hash, created_at) VALUES ('u1', 'old@example.com', 'x', 1)")
                try connection.execute(
                    """
                    INSERT INTO mfa_factors (id, user_id, kind, display_name, public_key, created_at)
                    VALUES ('f1', 'u1', 'device', 'Old phone', $1, 2)
                    """, [.text(key)])
            }
            #expect(try db.migrate(Schema.migrations) == Schema.migrations.filter { $0.version > 12 }.map(\.version))
            let factors = try db.transaction { try FactorRepository.list(UserID("u1"), on: $0) }
            let device = try #require(factors.first)
            #expect(factors.count == 1 && device.kind == .device)
            #expect(device.api.approvalBound == false && device.api.approvalGate == nil)
            #expect(device.methods == [.hwk])
            guard case .device(let keys) = device.credential else {
                Issue.record("a device row reads as a device")
                return
            }
            #expect(keys.approval == nil)
            let stored = try ECDSAPublicKey(subjectPublicKeyInfo: Array(try #require(Data(base64Encoded: key))))
            #expect(
                keys.approving.canonicalSubjectPublicKeyInfo == stored.canonicalSubjectPublicKeyInfo,
                "the one key approves, as before the upgrade")
        }
    }
}
