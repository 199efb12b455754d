import API
import Crypto
import Foundation
import Phone
import Store

/// The kind-specific columns that a factor row and a pending enrollment row
/// share, decoded one way: a column its kind needs is required, and a value
/// that does not parse is a decoding error naming the row (`owner`), never
/// a default.
struct FactorColumns {
    let row: Row
    /// What the row is, for the error: "totp factor 3f…", "device enrollment".
    let owner: String

    /// `value`, or a decoding error saying the row lacks `column`.
    func required<T>(_ value: T?, _ column: String) throws -> T {
        guard let value else { throw StoreError(.decoding, detail: "\(owner) has no \(column)") }
        return value
    }

    /// A required TEXT column.
    func text(_ column: String) throws -> String { try required(try row.optionalText(column), column) }

    /// A required TEXT column holding base64 bytes.
    func bytes(_ column: String) throws -> [UInt8] {
        Array(try required(try row.optionalText(column).flatMap { Data(base64Encoded: $0) }, column))
    }

    /// The `phone` column, parsed by libphonenumber.
    func phone() throws -> PhoneNumber {
        do { return try PhoneNumber(parsing: try text("phone")) } catch let error as StoreError { throw error } catch {
            throw StoreError(.decoding, detail: "\(owner) holds a number libphonenumber refuses")
        }
    }

    /// The sealed TOTP secret and its parameters.
    func totpSecret() throws -> TOTPSecret {
        TOTPSecret(
            sealed: try bytes("secret_sealed"),
            algorithm: try required(
                try row.optionalText("algorithm").flatMap(HMAC.Algorithm.init(rawValue:)), "algorithm"),
            digits: Int(try required(try row.optionalInt("digits"), "digits")))
    }

    /// The `public_key` column as a device's P-256 key (DER SubjectPublicKeyInfo),
    /// with the approval key of `approval_key`, `approval_gate` and `biometry` when it has one.
    func deviceKeys() throws -> DeviceKeys {
        let signing = try key(try bytes("public_key"))
        guard let approval = try row.optionalText("approval_key") else {
            return DeviceKeys(signing: signing, approval: nil)
        }
        guard let der = Data(base64Encoded: approval) else {
            throw StoreError(.decoding, detail: "\(owner) holds an approval key that is not base64")
        }
        guard let gate = ApprovalGate(rawValue: try text("approval_gate")) else {
            throw StoreError(.decoding, detail: "\(owner) holds an unknown approval gate")
        }
        let biometry = try row.optionalText("biometry").map { raw in
            guard let known = DeviceBiometry(rawValue: raw) else {
                throw StoreError(.decoding, detail: "\(owner) holds an unknown biometry")
            }
            return known
        }
        return DeviceKeys(
            signing: signing, approval: ApprovalKey(key: try key(Array(der)), gate: gate, biometry: biometry))
    }

    private func key(_ der: [UInt8]) throws -> ECDSAPublicKey {
        do { return try ECDSAPublicKey(subjectPublicKeyInfo: der) } catch {
            throw StoreError(.decoding, detail: "\(owner) holds a key OpenSSL refuses")
        }
    }
}
