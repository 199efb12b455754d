import API
import Core
import Crypto
import Foundation
import ServerTestSupport
import Store
import Testing
import TrifactorTestSupport
import WebAuthn

@testable import TrifactorServer

/// Requests that carry hostile CBOR: each gets a clear refusal and the
/// server keeps answering. A half float once reached libcbor's simple-value
/// accessors, whose assertion aborted the whole process.
@Suite("Hostile CBOR over HTTP")
struct CBORRequestTests {
    @Test(
        "a passkey enrollment whose attestation object is a half float is refused and the server lives on",
        arguments: Backend.all)
    func halfFloatEnrollment(backend: Backend) throws {
        try backend.withServer { server in
            let user = try MFAClient(server, email: "float@example.com")
            let begin = try user.call("POST", "/v1/mfa/enrollments", ["kind": "passkey"])
            #expect(begin.status == 202)
            let started = try begin.decode(EnrollmentStarted.self)
            let session = started.enrollmentSession
            let challenge = try #require(started.options?.challenge)
            let clientData = #"{"type":"webauthn.create","challenge":"\#(challenge)","origin":"http://localhost:8080"}"#
            let finish = try user.call(
                "POST", "/v1/mfa/enrollments/\(session)",
                [
                    "credential": [
                        "id": "AAAA", "type": "public-key",
                        "response": [
                            "clientDataJSON": Base64URL.encode(Array(clientData.utf8)),
                            "attestationObject": Base64URL.encode([0xf9, 0x00, 0x00]),
                        ],
                    ]
                ])
            #expect(finish.status == 400)
            #expect(try server.get("/health").status == 200)
        }
    }

    @Test(
        "a passwordless sign-in whose extensions are a half float is refused before any signature check, and the server lives on",
        arguments: Backend.all)
    func halfFloatExtensions(backend: Backend) throws {
        try backend.withServer { server in
            let authData = SHA256.hash(Array("localhost".utf8)) + [0x85, 0, 0, 0, 1] + [0xf9, 0x00, 0x00]
            let signIn = try Self.passwordlessSignIn(on: server, authenticatorData: authData)
            #expect(signIn.status == 401)
            #expect(try server.get("/health").status == 200)
        }
    }

    @Test("a passwordless sign-in with an 11,000-entry extensions map is refused", arguments: Backend.all)
    func hugeExtensionsMap(backend: Backend) throws {
        try backend.withServer { server in
            var map: [UInt8] = [0xb9, 0x2a, 0xf8]  // a map of 11,000 entries
            for key in 0..<11_000 { map += [0x19, UInt8(key >> 8), UInt8(key & 0xff), 0xf6] }
            let authData = SHA256.hash(Array("localhost".utf8)) + [0x85, 0, 0, 0, 1] + map
            let signIn = try Self.passwordlessSignIn(on: server, authenticatorData: authData)
            #expect(signIn.status == 401)
        }
    }

    /// A passwordless sign-in with a registered passkey's id, fresh options, and `authenticatorData`.
    static func passwordlessSignIn(on server: TestServer, authenticatorData: [UInt8]) throws -> HTTPTestClient.Response
    {
        let user = try MFAClient(server, email: "hostile@example.com")
        let credentialID = Base64URL.encode(Array(repeating: 7, count: 16))
        try registerPasskey(on: server, email: user.email, credentialID: credentialID)
        let options = try server.json("POST", "/v1/sessions/passkey/options", [:] as [String: String])
        let challenge = try options.decode(PasskeyOptions.self).options.challenge
        let clientData = #"{"type":"webauthn.get","challenge":"\#(challenge)","origin":"http://localhost:8080"}"#
        return try server.json(
            "POST", "/v1/sessions/passkey",
            [
                "assertion": [
                    "id": credentialID, "type": "public-key",
                    "response": [
                        "clientDataJSON": Base64URL.encode(Array(clientData.utf8)),
                        "authenticatorData": Base64URL.encode(authenticatorData),
                        "signature": Base64URL.encode([0x30, 0x06, 0x02, 0x01, 0x01, 0x02, 0x01, 0x01]),
                    ],
                ]
            ])
    }

    /// Stores a passkey factor for the user with a real P-256 COSE key (from `openssl`) and `credentialID`.
    static func registerPasskey(on server: TestServer, email: String, credentialID: String) throws {
        let spki = try #require(Data(base64Encoded: try DeviceKey().publicKey))
        let point = Array(spki.suffix(64))
        let cose: [UInt8] =
            [0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20] + point[0..<32] + [0x22, 0x58, 0x20]
            + point[32..<64]
        let passkey = Passkey(
            credentialID: credentialID, key: try CredentialPublicKey(cose: cose), signCount: 0, transports: [],
            backupEligible: false, backedUp: false)
        try server.database.transaction { db in
            let user = try #require(try AccountRepository.find(email: email, on: db))
            try FactorRepository.insert(
                Factor(
                    id: FactorID("passkey-\(credentialID)"), userID: user.id, displayName: "Test passkey",
                    createdAt: server.nowMillis, lastUsedAt: nil, credential: .passkey(passkey)), on: db)
        }
    }
}
