import API
import Foundation
import Testing
import TrifactorKit
import TrifactorKitTesting
import TrifactorKitVault

/// What the device shows of a payment pushed to it, and that it signs only the payment it shows.
@Suite("A device checks the payment it is shown against the hash it signs")
struct PaymentApprovalTests {
    static let action: [String: JSONScalar] = [
        "type": .string("transfer"), "amount": .string("250.00"), "currency": .string("EUR"),
        "payee": .string("Erika Mustermann"), "to": .string("DE89370400440532013000"),
    ]

    static func device(crypto: (any TokenCrypto)?) -> DeviceAuthenticator {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kit-\(UUID().uuidString)")
        // Never unlocked: checking a payment asks nothing of the keys.
        let vault = Vault(
            directory: directory, runtimeDirectory: nil, opsLimit: 1, memLimit: 8 << 20,
            ask: { _, _ throws(LocalAuthenticationError) in throw .userCancel })
        return DeviceAuthenticator(
            server: URL(string: "http://127.0.0.1:9")!, keys: SoftwareDeviceKeyStore(vault: vault),
            secrets: MemorySecretStore(), presence: ScriptedUserPresence(biometry: .none), crypto: crypto)
    }

    static func approval(_ action: [String: JSONScalar]?, hash: String?) -> PendingApproval {
        PendingApproval(
            approvalID: "a1", ip: nil, userAgent: nil, createdAt: Date(), expiresAt: Date().addingTimeInterval(120),
            choices: [12, 34, 56], purpose: "authz", message: "Trifactor Bank: Confirm transfer",
            action: action, actionHash: hash)
    }

    /// The hash the server binds the approval to: SHA-256 of the canonical form, hex.
    static func hash(_ action: [String: JSONScalar]) -> String {
        OpenSSLTokenCrypto().sha256(Data(CanonicalAction.form(action).utf8)).map { String(format: "%02x", $0) }
            .joined()
    }

    @Test("the payment whose details hash to the approval's hash is shown; a sign-in carries none")
    func shown() throws {
        let device = Self.device(crypto: OpenSSLTokenCrypto())
        #expect(try device.payment(of: Self.approval(Self.action, hash: Self.hash(Self.action))) == Self.action)
        var signIn = Self.approval(nil, hash: nil)
        signIn.purpose = "signin"
        #expect(try device.payment(of: signIn) == nil)
    }

    @Test("a changed amount, a hash without details, or a device that cannot hash signs nothing")
    func refused() {
        let device = Self.device(crypto: OpenSSLTokenCrypto())
        var shown = Self.action
        shown["amount"] = .string("25.00")
        for approval in [
            Self.approval(shown, hash: Self.hash(Self.action)), Self.approval(nil, hash: Self.hash(Self.action)),
            Self.approval(Self.action, hash: nil),
        ] {
            #expect(throws: TrifactorError.self) { try device.payment(of: approval) }
            do {
                _ = try device.payment(of: approval)
            } catch {
                #expect(error.code == .actionMismatch)
            }
        }
        let blind = Self.device(crypto: nil)
        #expect(throws: TrifactorError.self) {
            try blind.payment(of: Self.approval(Self.action, hash: Self.hash(Self.action)))
        }
    }

    @Test("the device's hash of a transfer is the fixed vector the server binds (SHA-256 of the canonical form, hex)")
    func vector() {
        // Computed apart from the Swift code (Python's hashlib over the form written out by hand).
        #expect(Self.hash(Self.action) == "9d7440a794215cbcafdb8dbb7d594c53d12ecc3a979561b1152d9fb1025cea90")
    }

    @Test("the canonical form keeps a string apart from a number and names every field with its length")
    func canonical() {
        #expect(CanonicalAction.form(["a": .string("250")]) != CanonicalAction.form(["a": .number(250)]))
        #expect(
            CanonicalAction.form(["type": .string("transfer"), "amount": .string("1.00")])
                == "6:amounts4:1.00;4:types8:transfer;")
    }
}
