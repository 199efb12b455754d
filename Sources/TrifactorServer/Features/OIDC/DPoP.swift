import Core
import Crypto
import Foundation
import JOSE
import Store

/// DPoP (RFC 9449): a client proves, request by request, that it holds the private key its tokens are bound to.
/// The proof is a JWT signed by that key and carrying its public half (`jwk`), naming the request's method and URL,
/// when it was made, a `jti` used once, the access token's hash when one is presented, and the server's nonce when
/// the operator asks for nonces (`TRIFACTOR_OIDC_DPOP_NONCE`). A bound token carries the key's RFC 7638
/// thumbprint as `cnf.jkt`.
struct DPoP: Sendable {
    let transactions: Transactions
    let clock: Clock
    /// Makes and checks the server's nonces (§8); nil: proofs need none.
    let nonces: Nonces?
    /// The proofs' keys, made once per `jwk` (a client signs its proofs with one key for a while): building the
    /// OpenSSL key decodes the point and checks it is on the curve, each time the same answer.
    let keys = JWKCache()

    /// The proof algorithms: asymmetric only (§4.3 5), as the server verifies.
    static let algorithms: Set<Algorithm> = ClientAuthentication.algorithms
    /// `iat` may be this far in the past (the proof travels and is checked within seconds)...
    static let maximumAge: Int64 = 60
    /// ...and this far in the future (clients' clocks run a little ahead).
    static let maximumLead: Int64 = 10
    /// A proof is a few hundred bytes; a cap keeps a hostile one cheap to refuse.
    static let maximumLength = 8 * 1024

    /// A proof that held: the key's thumbprint.
    struct Proof: Sendable, Equatable {
        let thumbprint: String
    }

    /// Why a proof was refused: `invalid_dpop_proof`, or `use_dpop_nonce` with the nonce to use (§8).
    enum Failure: Error, Equatable {
        case invalid(String)
        case nonce(String, fresh: String)

        var description: String {
            switch self {
            case .invalid(let reason): reason
            case .nonce(let reason, _): reason
            }
        }
    }

    /// Checks the `DPoP` header `proof` of a `method` request to `url` (query and fragment are never part of it),
    /// and `accessToken`'s hash (`ath`) when one is presented with it; records the proof's `jti` so it is taken once,
    /// by any instance.
    /// `algorithms`: those this request may use (a FAPI 2.0 client's: PS256, ES256 or EdDSA, §5.4.1).
    func check(
        _ proof: String, method: String, url: String, accessToken: String? = nil,
        algorithms: Set<Algorithm> = algorithms
    ) throws -> Proof {
        let now = clock.now().millis / 1000
        guard proof.utf8.count <= Self.maximumLength else { throw Failure.invalid("The DPoP proof is too long.") }
        // The header's JSON is read once, here, and its signature checked with the key it carries.
        guard let compact = try? JWS.Compact(proof) else { throw Failure.invalid("The DPoP proof is not a JWT.") }
        let header = compact.members
        // §4.2, §4.3 4-7: typ dpop+jwt, an asymmetric alg, and the public key it is signed with.
        guard header["typ"]?.string == "dpop+jwt" else {
            throw Failure.invalid("The DPoP proof's typ must be dpop+jwt.")
        }
        // §4.3 5: an asymmetric algorithm this server verifies (never none, never a MAC).
        guard let alg = header["alg"]?.string, algorithms.contains(where: { $0.rawValue == alg }) else {
            throw Failure.invalid("The DPoP proof's alg must be one of \(algorithms.map(\.rawValue).sorted()).")
        }
        guard case .object(let members)? = header["jwk"] else {
            throw Failure.invalid("The DPoP proof carries no jwk.")
        }
        let key: JWK
        do {
            key = try keys.key(members)
        } catch {
            throw Failure.invalid(
                "The DPoP proof's jwk is not a public P-256, Ed25519 or RSA key (RSA of 2048 bits or more).")
        }
        let verified: JWS.Verified
        do {
            verified = try compact.verified(with: key, allowing: algorithms)
        } catch .algorithmNotAllowed {
            throw Failure.invalid("The DPoP proof's alg must be one of \(Self.algorithms.map(\.rawValue).sorted()).")
        } catch {
            throw Failure.invalid("The DPoP proof's signature does not verify with its jwk.")
        }
        guard let claims = try? JWTClaims(payload: verified.payload) else {
            throw Failure.invalid("The DPoP proof's claims are not a JSON object.")
        }
        guard let jti = claims.string("jti"), (1...256).contains(jti.utf8.count) else {
            throw Failure.invalid("The DPoP proof needs a jti.")
        }
        guard claims.string("htm") == method else { throw Failure.invalid("The DPoP proof's htm is not \(method).") }
        // The server's own URL, sent back as it is (what clients do), needs no parse: it is its own normal form.
        guard let htu = claims.string("htu"),
            htu == url || Self.normalized(htu).map({ $0 == Self.normalized(url) }) == true
        else {
            throw Failure.invalid("The DPoP proof's htu is not \(url).")
        }
        // A NumericDate may have a fraction (RFC 7519 §2).
        guard let issuedAt = claims.seconds("iat") else { throw Failure.invalid("The DPoP proof needs an iat.") }
        guard issuedAt >= now - Self.maximumAge, issuedAt <= now + Self.maximumLead else {
            throw Failure.invalid(
                "The DPoP proof's iat is not within \(Self.maximumAge) s before and \(Self.maximumLead) s after the server's clock."
            )
        }
        if let accessToken {
            // §4.3 11, §7.1: the hash of the very token presented with it.
            guard claims.string("ath") == Base64URL.encode(SHA256.hash(Array(accessToken.utf8))) else {
                throw Failure.invalid("The DPoP proof's ath is not the hash of the access token presented.")
            }
        }
        if let nonces {
            guard let nonce = claims.string("nonce") else {
                throw Failure.nonce("This server wants its nonce in DPoP proofs.", fresh: nonces.current(now))
            }
            guard nonces.isValid(nonce, now: now) else {
                throw Failure.nonce("The DPoP proof's nonce is not current.", fresh: nonces.current(now))
            }
        }
        let thumbprint = key.thumbprint
        // §11.1: a proof is used once. Its jti is kept while its iat is acceptable on any instance (the window, and a
        // minute more for clocks that differ between instances), then swept.
        let fresh = try transactions.write { db in
            try db.execute(
                "INSERT INTO oidc_dpop_proofs (id, expires_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING",
                [
                    .text(SHA256.hex(thumbprint + " " + jti)),
                    .int((issuedAt + Self.maximumAge + Self.maximumLead + 60) * 1000),
                ]) == 1
        }
        guard fresh else { throw Failure.invalid("The DPoP proof was used already (its jti).") }
        return Proof(thumbprint: thumbprint)
    }

    /// A URL as RFC 9449 §4.3 9 compares it: without query and fragment, the scheme and host lower-cased and a
    /// default port dropped (RFC 3986 §6.2.2, §6.2.3).
    static func normalized(_ url: String) -> String? {
        guard var parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), parts.host != nil else {
            return nil
        }
        parts.query = nil
        parts.fragment = nil
        parts.scheme = scheme
        parts.host = parts.host?.lowercased()
        if (scheme == "https" && parts.port == 443) || (scheme == "http" && parts.port == 80) { parts.port = nil }
        if parts.path.isEmpty { parts.path = "/" }
        return parts.string
    }

    /// The server's DPoP nonces (§8), made without state so any instance checks any other's: the minute, with an
    /// HMAC under a key derived from the key ring's newest key. A nonce is taken in its minute and those either
    /// side (instances' clocks differ a little), under any key of the ring (an instance that has not yet read a
    /// rotated ring still checks the others' nonces, and is re-read when a nonce it cannot check comes).
    struct Nonces: Sendable {
        let ring: KeyRing

        func current(_ now: Int64) -> String {
            guard let newest = ring.entries.last else { return "" }
            return Self.nonce(minute: now / 60, key: Self.key(newest.key))
        }

        func isValid(_ nonce: String, now: Int64) -> Bool {
            if check(nonce, now: now) { return true }
            // A key rotated in by another instance: read the ring again (cheap when the file did not change).
            guard (try? ring.reload()) == true else { return false }
            return check(nonce, now: now)
        }

        private func check(_ nonce: String, now: Int64) -> Bool {
            let minute = now / 60
            return ring.entries.contains { entry in
                let key = Self.key(entry.key)
                return [minute - 1, minute, minute + 1].contains {
                    ConstantTime.equals(Self.nonce(minute: $0, key: key), nonce)
                }
            }
        }

        private static func key(_ ringKey: [UInt8]) -> [UInt8] {
            HMAC.authenticate(Array("trifactor dpop nonce v1".utf8), key: ringKey, algorithm: .sha256)
        }

        private static func nonce(minute: Int64, key: [UInt8]) -> String {
            let mac = HMAC.authenticate(Array(String(minute).utf8), key: key, algorithm: .sha256)
            return String(minute, radix: 36) + "." + Base64URL.encode(Array(mac.prefix(16)))
        }
    }
}

extension DPoP.Failure {
    /// The token endpoint's answer (RFC 9449 §5, §8): 400 `invalid_dpop_proof` or `use_dpop_nonce` with `DPoP-Nonce`.
    var tokenEndpointError: OAuthError {
        switch self {
        case .invalid(let reason): OAuthError(code: "invalid_dpop_proof", description: reason)
        case .nonce(let reason, let fresh): OAuthError(code: "use_dpop_nonce", description: reason, dpopNonce: fresh)
        }
    }
}
