extension JWK {
    /// Members that hold private key material in any key type (RFC 7518
    /// §6.2.2, §6.3.2, §6.4): a public key carrying one was published by mistake.
    private static let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// Parses one public JWK from its JSON members.
    /// - Throws: `.invalidKey` for private members, a member of the wrong
    ///   type or bad base64url, or numbers `init(parameters:)` refuses;
    ///   `.unsupportedKey` for a `kty`, `crv`, `alg` or `use` Trifactor does
    ///   not verify with.
    package init(members: [String: JSONValue]) throws(JOSEError) {
        guard Self.privateMembers.isDisjoint(with: members.keys) else { throw .invalidKey }
        func text(_ name: String) throws(JOSEError) -> String? {
            guard let value = members[name] else { return nil }
            guard let text = value.string else { throw .invalidKey }
            return text
        }
        func bytes(_ name: String) throws(JOSEError) -> [UInt8] {
            guard let text = try text(name), let bytes = StrictBase64URL.decode(text), !bytes.isEmpty else {
                throw .invalidKey
            }
            return bytes
        }
        // RFC 7517 §4.2: a key published for encryption must not verify signatures.
        if let use = try text("use"), use != "sig" { throw .unsupportedKey }
        var algorithm: Algorithm? = nil
        if let name = try text("alg") {
            guard let known = Algorithm(rawValue: name) else { throw .unsupportedKey }
            algorithm = known
        }
        let parameters: Parameters
        switch try text("kty") {
        case "EC":
            guard try text("crv") == "P-256" else { throw .unsupportedKey }
            parameters = .p256(x: try bytes("x"), y: try bytes("y"))
        case "RSA":
            parameters = .rsa(modulus: try bytes("n"), exponent: try bytes("e"))
        case "OKP":
            // RFC 8037 §2: Ed448 and the X curves (key agreement) are not verified here.
            guard try text("crv") == "Ed25519" else { throw .unsupportedKey }
            parameters = .ed25519(x: try bytes("x"))
        case nil:
            throw .invalidKey
        default:
            throw .unsupportedKey
        }
        try self.init(parameters: parameters, keyID: try text("kid"), algorithm: algorithm)
    }

    /// Parses one public JWK from JSON text.
    /// - Throws: `.invalidKey` when it is not a JSON object, else as `init(members:)`.
    package init(json: [UInt8]) throws(JOSEError) {
        guard let members = try? JSONValue.parseObject(json) else { throw .invalidKey }
        try self.init(members: members)
    }

    /// The JWK's members as Trifactor publishes them: the public numbers,
    /// `kid` and `alg` when known, and `use: "sig"`.
    package var members: [String: JSONValue] {
        var members: [String: JSONValue] = ["kty": .string(parameters.keyType), "use": "sig"]
        switch parameters {
        case .p256(let x, let y):
            members["crv"] = "P-256"
            members["x"] = .string(StrictBase64URL.encode(x))
            members["y"] = .string(StrictBase64URL.encode(y))
        case .rsa(let n, let e):
            members["n"] = .string(StrictBase64URL.encode(n))
            members["e"] = .string(StrictBase64URL.encode(e))
        case .ed25519(let x):
            members["crv"] = "Ed25519"
            members["x"] = .string(StrictBase64URL.encode(x))
        }
        if let keyID { members["kid"] = .string(keyID) }
        if let algorithm { members["alg"] = .string(algorithm.rawValue) }
        return members
    }

    /// The JWK as compact JSON with sorted members.
    package var json: [UInt8] { JSONValue.serialize(members) }
}
