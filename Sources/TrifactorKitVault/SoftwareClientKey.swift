import Core
import Crypto
public import Foundation
public import TrifactorKit

/// A confidential client's ES256 key kept in a file on the server that runs the client (PKCS #8 DER, mode 0600 in
/// a 0700 folder): what `SignInWithTrifactor.ClientCredentials` signs assertions and DPoP proofs with. The file is
/// made on first use; a file other users can read is refused.
public final class SoftwareClientKey: ClientSigningKey {
    private let key: P256SigningKey
    public let x: String
    public let y: String
    private let chosenKeyID: String?
    /// The `kid`: the one given, or the key's RFC 7638 thumbprint.
    public var keyID: String? { chosenKeyID ?? Base64URL.encode(SHA256.hash(Array(thumbprintInput.utf8))) }

    /// Why a key file could not be used.
    public struct Failure: Error, CustomStringConvertible {
        /// One sentence naming the file and what to do.
        public let description: String
    }

    /// The key in `path`, made there first when the file does not exist.
    /// - Parameters:
    ///   - path: the key file.
    ///   - keyID: the `kid` its JWK carries; nil: its RFC 7638 thumbprint.
    /// - Throws: `Failure` when the file is readable by others, damaged or cannot be written.
    public init(file path: String, keyID: String? = nil) throws(Failure) {
        let manager = FileManager.default
        try? manager.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        // Made with O_EXCL and mode 0600 from the start (never readable by others, never through a symlink); a file
        // that exists is read, never replaced: its public key is the one registered.
        let made = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        if made >= 0 {
            defer { close(made) }
            do {
                key = try P256SigningKey.generate()
                let der = try key.pkcs8()
                let written = der.withUnsafeBytes { write(made, $0.baseAddress, $0.count) }
                guard written == der.withUnsafeBytes({ $0.count }), fsync(made) == 0 else {
                    unlink(path)
                    throw Failure(description: "cannot write \(path).")
                }
            } catch let failure as Failure {
                throw failure
            } catch {
                unlink(path)
                throw Failure(description: "OpenSSL could not make a key (\(error)).")
            }
        } else {
            guard errno == EEXIST else { throw Failure(description: "cannot create \(path) (errno \(errno)).") }
            let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { throw Failure(description: "cannot read \(path): it must be a file of this user's.") }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                throw Failure(description: "\(path) is not a regular file.")
            }
            guard info.st_uid == getuid() else {
                throw Failure(description: "\(path) belongs to another user: the key must be this user's own file.")
            }
            guard info.st_mode & 0o077 == 0 else {
                throw Failure(description: "\(path) can be read by other users; run `chmod 600 \(path)`.")
            }
            // A PKCS #8 P-256 key is about 140 bytes: one read of a small buffer, wiped after.
            var data = [UInt8](repeating: 0, count: 1024)
            defer { data.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) } }
            let count = read(fd, &data, data.count)
            guard count > 0, count < data.count else { throw Failure(description: "cannot read a key from \(path).") }
            do { key = try P256SigningKey(pkcs8: SecureBytes(Array(data[..<count]))) } catch {
                throw Failure(description: "\(path) does not hold a P-256 key in PKCS #8; delete it to make a new one.")
            }
        }
        guard let point = try? key.publicCoordinates() else {
            throw Failure(description: "\(path) holds a key whose public point cannot be read.")
        }
        x = Base64URL.encode(point.x)
        y = Base64URL.encode(point.y)
        chosenKeyID = keyID
    }

    public func signES256(_ message: Data) throws -> Data {
        let der = try key.signature(for: Array(message))
        guard let raw = ECDSASignature.raw(fromDER: der) else {
            throw Failure(description: "OpenSSL made a signature that is not ECDSA's DER.")
        }
        return Data(raw)
    }

    /// The public key as a JWK Set (`{"keys":[…]}`), for `trifactord clients create --jwks-file`.
    public var publicJWKSet: String {
        let data = try? JSONSerialization.data(
            withJSONObject: ["keys": [publicJWK.merging(["use": "sig", "alg": "ES256"]) { a, _ in a }]],
            options: [.sortedKeys, .withoutEscapingSlashes])
        return data.map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}
