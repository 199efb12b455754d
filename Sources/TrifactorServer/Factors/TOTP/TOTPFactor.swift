import API
import Core
import Crypto
import Foundation
import Store

/// An authenticator app (RFC 6238): a 160-bit secret from the CSPRNG, sealed
/// at rest with AES-256-GCM under the key file's key; SHA1 and 6 digits by
/// default (SHA256, SHA512 and 8 digits on request), 30 s steps.
/// The current step and one either side are accepted, and the last accepted
/// step is remembered so a code is never accepted twice (RFC 6238 §5.2).
struct TOTPFactor: SecondFactor {
    let random: RandomSource
    /// Seals secrets at rest; nil without a key file (then enrollment is refused).
    let sealer: KeyRing?
    /// Shown in authenticator apps.
    let issuer: String
    var kind: Factor.Kind { .totp }
    static let period = 30

    func beginEnrollment(
        _ request: StartEnrollmentRequest, user: UserRecord, factorID: FactorID, client: AuditContext, now: Date
    ) throws -> EnrollmentStart {
        guard let sealer else { throw SecondFactorFailure.totpUnavailable }
        guard let algorithm = HMAC.Algorithm(rawValue: (request.algorithm ?? "SHA1").uppercased()) else {
            throw CommonFailure.invalid("algorithm", "must be SHA1, SHA256 or SHA512")
        }
        let digits = request.digits ?? 6
        guard digits == 6 || digits == 8 else { throw CommonFailure.invalid("digits", "must be 6 or 8") }
        let secret = SecureBytes(random.bytes(20))
        let sealed = try secret.withUnsafeBytes {
            try sealer.seal(Array($0), associatedData: Self.associatedData(factorID))
        }
        let base32 = secret.withUnsafeBytes { Base32.encode(Array($0)) }
        // The app's entry bears the relying party's name when its server named one.
        let uri = Self.uri(
            issuer: client.brand ?? issuer, account: user.email, secret: base32, algorithm: algorithm.rawValue,
            digits: digits)
        return EnrollmentStart(
            pending: .totp(TOTPSecret(sealed: sealed, algorithm: algorithm, digits: digits)),
            displayName: "Authenticator app",
            offer: .totp(secret: base32, otpauthURI: uri, qrSVG: try QRCode.svg(uri)))
    }

    /// The offer of an enrollment under way again (its QR code and key), from its sealed secret.
    func offer(_ secret: TOTPSecret, factorID: FactorID, account: String, brand: String?) throws -> EnrollmentOffer {
        guard let sealer else { throw SecondFactorFailure.totpUnavailable }
        let plain = SecureBytes(try sealer.open(secret.sealed, associatedData: Self.associatedData(factorID)))
        let base32 = plain.withUnsafeBytes { Base32.encode(Array($0)) }
        let uri = Self.uri(
            issuer: brand ?? issuer, account: account, secret: base32, algorithm: secret.algorithm.rawValue,
            digits: secret.digits)
        return .totp(secret: base32, otpauthURI: uri, qrSVG: try QRCode.svg(uri))
    }

    func finishEnrollment(
        _ draft: EnrollmentDraft, proof: EnrollmentProof, client: AuditContext, now: Date, on db: any SQLConnection
    ) throws -> EnrolledCredential? {
        guard case .code(let code) = proof, case .totp(let secret) = draft.pending,
            let step = try matchingStep(secret, factorID: draft.factorID, code: code, now: now)
        else { return nil }
        return EnrolledCredential(credential: .totp(secret), initialStep: Int64(step))
    }

    func challenge(_ factor: Factor, purpose: Purpose, intent: CodeIntent, client: AuditContext, now: Date) throws
        -> ChallengeIssued
    { .none }

    func verify(
        _ factor: Factor, proof: Proof, purpose: Purpose, client: AuditContext, now: Date, on db: any SQLConnection
    ) throws -> Bool {
        guard case .code(let code) = proof, case .totp(let secret) = factor.credential,
            let step = try matchingStep(secret, factorID: factor.id, code: code, now: now)
        else { return false }
        // A replay (this step or an older one already used) fails here, atomically.
        return try FactorRepository.advanceStep(factor.id, to: Int64(step), on: db)
    }

    func malformed(_ proof: Proof, of factor: Factor) -> String? {
        guard case .code(let code) = proof, case .totp(let secret) = factor.credential else { return nil }
        return code.count == secret.digits && code.allSatisfy({ $0.isASCII && $0.isNumber })
            ? nil : "is the \(secret.digits)-digit code from the authenticator app"
    }

    /// The step among now−1, now, now+1 whose code is `code`; all three are computed and compared in constant time.
    func matchingStep(_ totp: TOTPSecret, factorID: FactorID, code: String, now: Date) throws -> UInt64? {
        guard code.count == totp.digits, code.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        guard let sealer else { throw SecondFactorFailure.totpUnavailable }
        let secret = SecureBytes(try sealer.open(totp.sealed, associatedData: Self.associatedData(factorID)))
        let current = OneTimePassword.step(unixTime: now.timeIntervalSince1970, period: Self.period)
        var match: UInt64?
        for step in [current - 1, current, current + 1] {
            let candidate = secret.withUnsafeBytes {
                OneTimePassword.hotp(secret: Array($0), counter: step, digits: totp.digits, algorithm: totp.algorithm)
            }
            if ConstantTime.equals(candidate, code) { match = step }
        }
        return match
    }

    static func associatedData(_ factorID: FactorID) -> [UInt8] { Array("trifactor:totp:\(factorID.raw)".utf8) }

    /// `otpauth://totp/Issuer:account?secret=…&issuer=…&algorithm=SHA1&digits=6&period=30`.
    static func uri(issuer: String, account: String, secret: String, algorithm: String, digits: Int) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@")
        let label =
            (issuer.addingPercentEncoding(withAllowedCharacters: allowed) ?? issuer) + ":"
            + (account.addingPercentEncoding(withAllowedCharacters: allowed) ?? account)
        let issuerParam = issuer.addingPercentEncoding(withAllowedCharacters: allowed) ?? issuer
        return
            "otpauth://totp/\(label)?secret=\(secret)&issuer=\(issuerParam)&algorithm=\(algorithm)&digits=\(digits)&period=\(period)"
    }
}
