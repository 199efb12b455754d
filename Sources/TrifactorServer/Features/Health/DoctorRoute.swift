import API
import Core
import Crypto
import Foundation
import Glibc
import HTTP
import Synchronization

/// The proofs of `trifactord doctor`'s request through the public URL, both ways, under a key derived from the
/// key ring (only someone holding the key file asks, and only this deployment answers):
/// - the request's header `Trifactor-Doctor: at=UNIX;nonce=HEX;proof=HEX`, proof = HMAC(k, "request\nAT\nNONCE");
/// - the answer's header `Trifactor-Doctor-Proof`, HMAC(k, "answer\nNONCE\n" + body).
/// k = HMAC-SHA256(ring key, "trifactor doctor v1"), for any key of the ring (so a rotation in progress still
/// matches). The time window is 60 s either side, and each nonce is answered once (`DoctorNonces`): a captured
/// header cannot be replayed for a fresh echo of someone else's request.
enum DoctorProof {
    static let header = "Trifactor-Doctor"
    static let answerHeader = "Trifactor-Doctor-Proof"
    static let window: TimeInterval = 60

    static func key(_ ringKey: [UInt8]) -> [UInt8] {
        HMAC.authenticate(Array("trifactor doctor v1".utf8), key: ringKey, algorithm: .sha256)
    }

    static func request(key: [UInt8], at: Int, nonce: String) -> String {
        Hex.encode(HMAC.authenticate(Array("request\n\(at)\n\(nonce)".utf8), key: key, algorithm: .sha256))
    }

    static func answer(key: [UInt8], nonce: String, body: [UInt8]) -> String {
        Hex.encode(HMAC.authenticate(Array("answer\n\(nonce)\n".utf8) + body, key: key, algorithm: .sha256))
    }

    /// `at`, `nonce` and `proof` of the request header; nil when malformed.
    static func parse(_ value: String) -> (at: Int, nonce: String, proof: String)? {
        guard value.utf8.count <= 256 else { return nil }
        var fields: [Substring: Substring] = [:]
        for part in value.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            fields[pair[0].trimmingCharacters(in: .whitespaces)[...]] =
                pair[1].trimmingCharacters(in: .whitespaces)[...]
        }
        guard let atText = fields["at"], let at = Int(atText), let nonce = fields["nonce"], let proof = fields["proof"],
            (16...64).contains(nonce.count), nonce.allSatisfy(\.isHexDigit), proof.count == 64
        else { return nil }
        return (at, String(nonce), String(proof))
    }
}

/// What the server saw of the doctor's request: the connection's peer and whether it is a trusted proxy, the
/// `X-Forwarded-For` that came, the client address it settled on, and its own limits and clock.
struct DoctorEcho: Codable, Sendable {
    var version: String
    var peer: String
    var peerTrusted: Bool
    var forwardedFor: String?
    var client: String
    var fileLimit: Int
    var connectionLimit: Int
    var time: Double

    enum CodingKeys: String, CodingKey {
        case version, peer, client, time
        case peerTrusted = "peer_trusted"
        case forwardedFor = "forwarded_for"
        case fileLimit = "file_limit"
        case connectionLimit = "connection_limit"
    }
}

/// The nonces of the doctor's requests answered in the last two windows, at most 1,000 (only proven requests
/// add one, so a stranger cannot fill it).
final class DoctorNonces: Sendable {
    private let seen = Mutex<[String: TimeInterval]>([:])

    /// True the first time `nonce` is offered within the window; false after.
    func first(_ nonce: String, now: TimeInterval) -> Bool {
        seen.withLock { seen in
            if seen.count >= 1_000 { seen = seen.filter { now - $0.value <= 2 * DoctorProof.window } }
            guard seen.count < 1_000, seen[nonce] == nil else { return false }
            seen[nonce] = now
            return true
        }
    }
}

/// `GET /.well-known/trifactor-doctor`: answers `DoctorEcho` to a request proving the key ring, and the usual
/// 404 to any other (a server without a key file has no such address). Nothing is written.
struct DoctorRoute {
    let keys: KeyRing?
    let trustedProxies: TrustedProxies
    let connectionLimit: Int
    let clock: Clock
    let nonces = DoctorNonces()

    static let path = "/.well-known/trifactor-doctor"

    func register(on router: inout Router) {
        router.add("GET", Self.path, execution: .inline) { request in
            guard let keys, let value = request.header(DoctorProof.header), let asked = DoctorProof.parse(value),
                abs(clock.now().timeIntervalSince1970 - Double(asked.at)) <= DoctorProof.window
            else { return .problem(HTTPProblem.notFound.problem(requestID: request.id)) }
            // A key rotated in since the server last read the ring (the doctor proves with the newest key).
            _ = try? keys.reload()
            let proven = keys.entries.map { DoctorProof.key($0.key) }.first {
                ConstantTime.equals(DoctorProof.request(key: $0, at: asked.at, nonce: asked.nonce), asked.proof)
            }
            guard let key = proven, nonces.first(asked.nonce, now: clock.now().timeIntervalSince1970) else {
                return .problem(HTTPProblem.notFound.problem(requestID: request.id))
            }
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            let peer = request.received?.peer ?? request.remoteAddress
            let echo = DoctorEcho(
                version: TrifactorVersion.current, peer: peer, peerTrusted: trustedProxies.trusts(peer),
                forwardedFor: request.received?.forwardedFor, client: request.remoteAddress,
                fileLimit: Int(clamping: limit.rlim_cur), connectionLimit: connectionLimit,
                time: clock.now().timeIntervalSince1970)
            var response = Response.json(echo)
            response.headers.append(
                (DoctorProof.answerHeader, DoctorProof.answer(key: key, nonce: asked.nonce, body: response.body)))
            response.headers.append(("Cache-Control", "no-store"))
            return response
        }
    }
}
