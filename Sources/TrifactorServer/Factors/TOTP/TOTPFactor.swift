import API
import Core
import Crypto
import Foundation

/// An authenticator app (RFC 6238): a 160-bit secret from the CSPRNG, sealed
/// at rest with AES-256-GCM under the key file's key; SHA1 and 6 digits by
/// default (SHA256, SHA512 and 8 digits on request), 30 s steps.
/// The current step and one either side are accepted, and the last accepted
/// step is remembered so a code is never accepted twice (RFC 6238 §5.2).
struct TOTPFactor: SecondFactor {
    let env: Environment
    var kind: String { "totp" }
    var method: String { "otp" }
    var enrollable: Bool { true }
    static let period = 30

    func beginEnrollment(_ request: StartEnrollmentRequest, user: UserRecord, factorID: String, context: AuditContext) throws -> EnrollmentDraft {
        guard let box = env.secretBox else { throw APIError.totpUnavailable }
        let algorithm = (request.algorithm ?? "SHA1").uppercased(), digits = request.digits ?? 6
        guard HMAC.Algorithm(rawValue: algorithm) != nil else { throw APIError.invalidFields([.init(name: "algorithm", reason: "must be SHA1, SHA256 or SHA512")]) }
        guard digits == 6 || digits == 8 else { throw APIError.invalidFields([.init(name: "digits", reason: "must be 6 or 8")]) }
        let secret = env.random.bytes(20)
        let sealed = try box.seal(secret, associatedData: Self.associatedData(factorID))
        let base32 = Base32.encode(secret)
        let uri = Self.uri(issuer: env.configuration.totpIssuer, account: user.email, secret: base32, algorithm: algorithm, digits: digits)
        return EnrollmentDraft(kind: kind, userID: user.id, factorID: factorID, displayName: "Authenticator app",
                               secretSealed: Data(sealed).base64EncodedString(), algorithm: algorithm, digits: digits,
                               response: EnrollmentStarted(secret: base32, otpauthURI: uri, qrSVG: try QRCode.svg(uri)))
    }

    func finishEnrollment(_ draft: EnrollmentDraft, proof: Proof, context: AuditContext) throws -> FactorRecord? {
        guard let code = proof.code else { return nil }
        let algorithm = draft.algorithm ?? "SHA1", digits = draft.digits ?? 6
        guard let sealed = draft.secretSealed,
              let step = try matchingStep(sealed: sealed, factorID: draft.factorID, code: code, algorithm: algorithm, digits: digits) else { return nil }
        return FactorRecord(id: draft.factorID, userID: draft.userID, kind: kind, displayName: draft.displayName, phone: nil,
                            secretSealed: sealed, algorithm: algorithm, digits: digits, createdAt: env.nowMillis, lastUsedAt: nil, initialStep: Int64(step))
    }

    func challenge(_ factor: FactorRecord, purpose: Purpose, context: AuditContext) throws -> String? { nil }

    func verify(_ factor: FactorRecord, proof: Proof, purpose: Purpose, context: AuditContext) throws -> Bool {
        guard let code = proof.code else { return false }
        guard let sealed = factor.secretSealed,
              let step = try matchingStep(sealed: sealed, factorID: factor.id, code: code, algorithm: factor.algorithm ?? "SHA1", digits: factor.digits ?? 6)
        else { return false }
        // A replay (this step or an older one already used) fails here, atomically.
        return try env.transaction { try FactorRepository.advanceStep(id: factor.id, to: Int64(step), on: $0) }
    }

    /// The step among now−1, now, now+1 whose code is `code`; all three are computed and compared in constant time.
    func matchingStep(sealed: String, factorID: String, code: String, algorithm: String, digits: Int) throws -> UInt64? {
        guard code.count == digits, code.allSatisfy({ $0.isASCII && $0.isNumber }), let hmac = HMAC.Algorithm(rawValue: algorithm) else { return nil }
        guard let box = env.secretBox, let bytes = Data(base64Encoded: sealed) else { throw APIError.totpUnavailable }
        let secret = try box.open(Array(bytes), associatedData: Self.associatedData(factorID))
        let now = OneTimePassword.step(unixTime: env.clock.now().timeIntervalSince1970, period: Self.period)
        var match: UInt64?
        for step in [now - 1, now, now + 1] {
            let candidate = OneTimePassword.hotp(secret: secret, counter: step, digits: digits, algorithm: hmac)
            if ConstantTime.equals(candidate, code) { match = step }
        }
        return match
    }

    static func associatedData(_ factorID: String) -> [UInt8] { Array("trifactor:totp:\(factorID)".utf8) }

    /// `otpauth://totp/Issuer:account?secret=…&issuer=…&algorithm=SHA1&digits=6&period=30`.
    static func uri(issuer: String, account: String, secret: String, algorithm: String, digits: Int) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@")
        let label = (issuer.addingPercentEncoding(withAllowedCharacters: allowed) ?? issuer) + ":" + (account.addingPercentEncoding(withAllowedCharacters: allowed) ?? account)
        let issuerParam = issuer.addingPercentEncoding(withAllowedCharacters: allowed) ?? issuer
        return "otpauth://totp/\(label)?secret=\(secret)&issuer=\(issuerParam)&algorithm=\(algorithm)&digits=\(digits)&period=\(period)"
    }
}
