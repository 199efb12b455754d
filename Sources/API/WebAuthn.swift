/// A credential descriptor in options.
public struct CredentialDescriptor: Codable, Sendable, Equatable {
    public var type: String
    public var id: String
    public var transports: [String]?
    public init(id: String, transports: [String]? = nil) {
        type = "public-key"
        self.id = id
        self.transports = transports
    }
}

/// PublicKeyCredentialCreationOptions as JSON (base64url for binary fields),
/// ready for `PublicKeyCredential.parseCreationOptionsFromJSON`.
public struct CreationOptions: Codable, Sendable, Equatable {
    public struct RP: Codable, Sendable, Equatable {
        public var id: String
        public var name: String
    }
    public struct User: Codable, Sendable, Equatable {
        public var id: String
        public var name: String
        public var displayName: String
    }
    public struct Param: Codable, Sendable, Equatable {
        public var type = "public-key"
        public var alg: Int
    }
    public struct Selection: Codable, Sendable, Equatable {
        public var residentKey: String
        public var userVerification: String
    }

    public var rp: RP
    public var user: User
    public var challenge: String
    public var pubKeyCredParams: [Param]
    public var timeout: Int
    public var excludeCredentials: [CredentialDescriptor]
    public var authenticatorSelection: Selection
    public var attestation: String

    public init(
        rpID: String, rpName: String, userID: String, userName: String, displayName: String, challenge: String,
        exclude: [CredentialDescriptor]
    ) {
        rp = RP(id: rpID, name: rpName)
        user = User(id: userID, name: userName, displayName: displayName)
        self.challenge = challenge
        pubKeyCredParams = [Param(alg: -7), Param(alg: -8), Param(alg: -257)]
        timeout = 300_000
        excludeCredentials = exclude
        authenticatorSelection = Selection(residentKey: "preferred", userVerification: "required")
        attestation = "none"
    }
}

/// PublicKeyCredentialRequestOptions as JSON.
public struct RequestOptions: Codable, Sendable, Equatable {
    public var challenge: String
    public var rpId: String
    public var allowCredentials: [CredentialDescriptor]
    public var userVerification: String
    public var timeout: Int
    public init(challenge: String, rpID: String, allow: [CredentialDescriptor]) {
        self.challenge = challenge
        rpId = rpID
        allowCredentials = allow
        userVerification = "required"
        timeout = 300_000
    }
}

/// A `PublicKeyCredential.toJSON()` from the browser: a registration or an assertion.
public struct CredentialJSON: Codable, Sendable, Equatable {
    public struct Response: Codable, Sendable, Equatable {
        public var clientDataJSON: String
        public var attestationObject: String?
        public var authenticatorData: String?
        public var signature: String?
        public var userHandle: String?
        public var transports: [String]?
        public init(
            clientDataJSON: String, attestationObject: String? = nil, authenticatorData: String? = nil,
            signature: String? = nil,
            userHandle: String? = nil, transports: [String]? = nil
        ) {
            self.clientDataJSON = clientDataJSON
            self.attestationObject = attestationObject
            self.authenticatorData = authenticatorData
            self.signature = signature
            self.userHandle = userHandle
            self.transports = transports
        }
    }
    public var id: String
    public var rawId: String?
    public var type: String
    public var response: Response
    public init(id: String, rawId: String? = nil, type: String = "public-key", response: Response) {
        self.id = id
        self.rawId = rawId
        self.type = type
        self.response = response
    }
}

/// `POST /v1/sessions/passkey`.
public struct PasskeySignInRequest: Codable, Sendable {
    public var assertion: CredentialJSON
    public init(assertion: CredentialJSON) { self.assertion = assertion }
}

/// `POST /v1/sessions/passkey/options`.
public struct PasskeyOptions: Codable, Sendable, Equatable {
    public var options: RequestOptions
    public init(options: RequestOptions) { self.options = options }
}
