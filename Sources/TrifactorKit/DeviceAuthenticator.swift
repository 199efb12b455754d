import API
public import Foundation

/// This device as an authenticator: a P-256 key that never leaves it,
/// enrolled as the user's device factor, which receives pending sign-ins
/// (a signed long poll, reconnecting, corrected for clock skew) and answers
/// them with the number the user picked, after a presence check.
///
/// Two keys: the device key signs every long poll (every 25 s) and denials,
/// so it never prompts; the approval key, made at enrollment, is released
/// by the platform only after the check `approvalPolicy` names (the Secure
/// Enclave after Face ID or Touch ID, or the passcode with
/// `.biometricsOrPasscode`; the vault after its passphrase), and signs
/// approvals, step-ups and bound actions. The server checks those against
/// the approval key alone, so a hooked "Face ID passed" approves nothing.
/// A device enrolled before approval keys has none: it still asks
/// `UserPresence` before signing with its one key, and the server lists its
/// factor as not approval-bound.
public struct DeviceAuthenticator: Sendable {
    let connection: Connection
    let keys: any DeviceKeyStore
    let secrets: any SecretStore
    let presence: any UserPresence
    let clock: any TrifactorClock
    /// SHA-256, to recompute the hash of a payment the device shows before signing it.
    let crypto: (any TokenCrypto)?
    /// The key's tag, and the prefix of what is stored about it.
    public let tag: String
    /// What an approval, a step-up or a bound-action signature asks of the user.
    public let approvalPolicy: PresencePolicy
    private let skew = Locked<TimeInterval>(0)

    /// - Parameters:
    ///   - server: the server's base URL.
    ///   - keys: where the key lives (Secure Enclave, or the Linux vault).
    ///   - secrets: where the device's factor id is kept.
    ///   - presence: the check before each approval and signature (a device enrolled before approval keys).
    ///   - transport: how requests reach the server (`URLSessionTransport` unless a test says otherwise).
    ///   - clock: the device's clock; a skew from the server's `Date` is corrected.
    ///   - tag: the key's tag, and the prefix of what is stored about it.
    ///   - approvalPolicy: what releases the approval key: biometrics only, or the passcode too.
    ///   - crypto: SHA-256 for the payments the device approves (`CryptoKitTokenCrypto` on Apple platforms, the
    ///     default there; `OpenSSLTokenCrypto` from `TrifactorKitVault` on Linux). Without it, payments are refused.
    public init(
        server: URL, keys: any DeviceKeyStore, secrets: any SecretStore, presence: any UserPresence,
        transport: any HTTPTransport = URLSessionTransport(), clock: any TrifactorClock = SystemClock(),
        tag: String = "device",
        approvalPolicy: PresencePolicy = .biometricsOrPasscode,
        crypto: (any TokenCrypto)? = DeviceAuthenticator.platformCrypto
    ) {
        self.crypto = crypto
        self.approvalPolicy = approvalPolicy
        connection = Connection(server: server, transport: transport, userAgent: "TrifactorKit/1 device")
        self.keys = keys
        self.secrets = secrets
        self.presence = presence
        self.clock = clock
        self.tag = tag
    }

    private var idKey: String { "\(tag).factor-id" }
    /// The approval key's tag.
    var approvalTag: String { "\(tag).approval" }
    /// Set when the enrolled factor holds the approval key (an enrollment that failed midway leaves a key, not this).
    private var boundKey: String { "\(tag).approval-bound" }

    /// The enrolled factor's id, or nil before `enroll`.
    public func factorID() async throws(TrifactorError) -> String? {
        do { return try await secrets.get(idKey, prompt: nil).map { String(decoding: $0, as: UTF8.self) } } catch {
            throw .secretStore(error)
        }
    }

    /// Makes this device's keys (those it lacks) and enrolls them as a device
    /// factor of `client`'s user: the approval key's check shows once, to sign
    /// the enrollment.
    /// - Throws: what enrolling throws (`reauthentication_required`, `second_factor_required`, `second_factor_exists`),
    ///   `.presence` when the check cannot be met (`.biometryNotEnrolled` for Face ID only on a phone without a face).
    ///
    /// Enrollments of one device (one `tag`) run one at a time in this process: a second one waits for the first, then
    /// finds the device enrolled and is refused (`second_factor_exists`) without touching its keys.
    @discardableResult
    public func enroll(with client: TrifactorClient, name: String) async throws(TrifactorError) -> EnrolledFactor {
        await EnrollmentLock.shared.acquire(tag)
        let outcome: Result<EnrolledFactor, TrifactorError>
        do { outcome = .success(try await enrollAlone(with: client, name: name)) } catch { outcome = .failure(error) }
        await EnrollmentLock.shared.release(tag)
        return try outcome.get()
    }

    private func enrollAlone(with client: TrifactorClient, name: String) async throws(TrifactorError) -> EnrolledFactor
    {
        let publicKey = try await ensureKey(tag, releasedBy: nil)
        if try await factorID() == nil {
            // An approval key left by an enrollment that never finished may have been
            // made under another policy, and the gate sent is this policy's: make it anew.
            do { try await keys.deleteKey(tag: approvalTag) } catch { throw .secretStore(error) }
        }
        let approvalKey = try await ensureKey(approvalTag, releasedBy: approvalPolicy)
        let gate = keys.gate(for: approvalPolicy)
        let started = try await client.startEnrollment(
            StartEnrollmentRequest(
                kind: "device", publicKey: publicKey.base64EncodedString(), deviceName: name,
                approvalKey: approvalKey.base64EncodedString(),
                approvalKeyGate: gate.rawValue,
                biometry: gate == .biometry ? Self.wireName(presence.availableBiometry) : nil))
        guard let challenge = started.challenge else { throw .unexpectedResponse(status: 202) }
        let approvalSignature = try await sign(
            purpose: "enroll", challenge: challenge, action: "approval-key", tag: approvalTag,
            reason: "Add this device to your account")
        let signature = try await sign(purpose: "enroll", challenge: challenge, reason: nil)
        let factor = try await client.finishEnrollment(
            started.enrollmentSession,
            FinishEnrollmentRequest(
                signature: signature.base64EncodedString(), approvalSignature: approvalSignature.base64EncodedString(),
                displayName: name))
        do {
            try await secrets.set(
                Data(factor.enrollmentID.utf8), for: idKey, protection: .afterFirstUnlockThisDeviceOnly)
            try await secrets.set(Data("1".utf8), for: boundKey, protection: .afterFirstUnlockThisDeviceOnly)
        } catch { throw .secretStore(error) }
        return factor
    }

    /// Whether approvals from this device are signed by its approval key (false for a device enrolled before approval keys).
    public func isApprovalBound() async throws(TrifactorError) -> Bool {
        do { return try await secrets.contains(boundKey) } catch { throw .secretStore(error) }
    }

    /// Deletes the keys and forgets the factor id (remove the factor on the server too: `TrifactorClient.removeFactor`).
    public func forget() async throws(TrifactorError) {
        do {
            try await keys.deleteKey(tag: tag)
            try await keys.deleteKey(tag: approvalTag)
            try await secrets.remove(idKey)
            try await secrets.remove(boundKey)
        } catch { throw .secretStore(error) }
    }

    /// The public key (SubjectPublicKeyInfo DER), or nil before one is made.
    public func publicKey() async throws(TrifactorError) -> Data? {
        do { return try await keys.publicKey(tag: tag) } catch { throw .secretStore(error) }
    }

    /// A signature over Trifactor's device message (step-up `stepup`, bound action `authz` with its action hash, sign-in `signin`),
    /// after a presence check that shows `reason`.
    public func signature(purpose: String, challenge: String, action: String? = nil, reason: String)
        async throws(TrifactorError) -> Data
    {
        try await approvalSignature(purpose: purpose, challenge: challenge, action: action, reason: reason)
    }

    /// The pending approvals now, or after up to `wait` seconds when there are none.
    /// - Throws: `.deviceNotEnrolled`, or the server's problem (a revoked device is `unauthenticated`).
    public func pendingApprovals(wait: Int = 0) async throws(TrifactorError) -> [PendingApproval] {
        guard let id = try await factorID() else { throw .deviceNotEnrolled }
        var retried = false
        while true {
            let before = clockSkew
            let response = try await connection.exchange(
                "GET", "/v1/devices/\(TrifactorClient.segment(id))/approvals",
                query: [URLQueryItem(name: "wait", value: String(max(0, min(25, wait))))],
                headers: try await deviceHeaders(id), timeout: TimeInterval(wait + 15))
            noteServerTime(response)
            // Refused for a clock this device had wrong: once more with the server's time.
            if response.status == 401, !retried, clockSkew != before {
                retried = true
                continue
            }
            guard (200..<300).contains(response.status) else { throw Connection.problem(response) }
            guard let list = try? WireJSON.sharedDecoder.decode(PendingApprovals.self, from: response.body) else {
                throw .unexpectedResponse(status: response.status)
            }
            return list.approvals
        }
    }

    /// Pending approvals as they arrive: long polls one after another,
    /// reconnecting after a transport failure (1, 2, 4 … 30 s apart), each
    /// approval once. Ends with an error the server gave (a revoked device).
    public func approvals() -> AsyncThrowingStream<PendingApproval, any Error> {
        AsyncThrowingStream(PendingApproval.self) { continuation in
            let task = Task {
                var seen = Set<String>()
                var backoff: UInt64 = 1
                while !Task.isCancelled {
                    do throws(TrifactorError) {
                        let listed = try await pendingApprovals(wait: 25)
                        var fresh = false
                        for approval in listed where seen.insert(approval.approvalID).inserted {
                            fresh = true
                            continuation.yield(approval)
                        }
                        backoff = 1
                        // The long poll answers at once while any approval waits: with only ones already given to
                        // the app (the user is still looking at them), ask again in 2 s rather than at once.
                        if !listed.isEmpty && !fresh { try? await Task.sleep(nanoseconds: 2_000_000_000) }
                    } catch {
                        if let problem = error.problem, [429, 502, 503, 504].contains(problem.status) {
                            // Busy or restarting: wait as told (or back off), then poll again.
                            let wait = UInt64(max(1, min(60, problem.retryAfter ?? Double(backoff))))
                            try? await Task.sleep(nanoseconds: wait * 1_000_000_000)
                            backoff = min(30, backoff * 2)
                        } else if error.code == .transport {
                            try? await Task.sleep(nanoseconds: backoff * 1_000_000_000)
                            backoff = min(30, backoff * 2)
                        } else {
                            continuation.finish(throwing: error)
                            return
                        }
                    }
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// The SHA-256 this platform offers without another module: CryptoKit's on Apple platforms, none on Linux.
    public static var platformCrypto: (any TokenCrypto)? {
        #if canImport(CryptoKit)
            CryptoKitTokenCrypto()
        #else
            nil
        #endif
    }

    /// The payment `approval` asks for, when it is one (`purpose` `authz`): its action, checked against the hash the
    /// approval is bound to, so what the user is shown is what the device signs.
    /// - Throws: `.actionMismatch` when the action does not hash to `action_hash`, or this device cannot hash.
    public func payment(of approval: PendingApproval) throws(TrifactorError) -> [String: JSONScalar]? {
        guard approval.actionHash != nil || approval.action != nil else { return nil }
        guard let action = approval.action, let hash = approval.actionHash else {
            throw .actionMismatch("The approval names a payment without its details.")
        }
        guard let crypto else {
            throw .actionMismatch("This device cannot hash a payment: give DeviceAuthenticator a TokenCrypto.")
        }
        let digest = crypto.sha256(Data(CanonicalAction.form(action).utf8))
        guard digest.map({ String(format: "%02x", $0) }).joined() == hash.lowercased() else {
            throw .actionMismatch("The payment shown is not the payment this approval is for: nothing was signed.")
        }
        return action
    }

    /// "Pay EUR 250.00 to Erika Mustermann", or "Approve the payment" for an action that is not a transfer.
    static func paymentReason(_ action: [String: JSONScalar]?) -> String {
        guard let action, let amount = action["amount"]?.text, let payee = action["payee"]?.text else {
            return "Approve the payment"
        }
        return "Pay \(action["currency"].map { "\($0.text) " } ?? "")\(amount) to \(payee)"
    }

    /// Answers `approval` with the number the user picked (nil denies),
    /// after a presence check. A wrong number denies, and the server ends that sign-in.
    /// For a payment (`purpose` `authz`), the decision signs the hash of the payment shown, recomputed here first
    /// for an approval (a denial checks nothing).
    /// - Returns: the approval's state after the answer (`approved` or `denied`).
    /// - Throws: `.actionMismatch` when approving a payment whose details do not hash to what it is bound to.
    public func answer(_ approval: PendingApproval, pickedNumber: Int?) async throws(TrifactorError)
        -> PushApproval.State
    {
        guard let id = try await factorID() else { throw .deviceNotEnrolled }
        let decision = pickedNumber == nil ? "deny" : "approve"
        let number = pickedNumber ?? 0
        // A denial says no to whatever was asked: it checks nothing, so a device that cannot hash (or was shown a
        // payment that does not match) can still refuse it. An approval signs only the payment it checked.
        let payment = pickedNumber == nil ? nil : try self.payment(of: approval)
        let action = "\(decision):\(number)" + (approval.actionHash.map { ":\($0)" } ?? "")
        let reason =
            switch approval.purpose {
            case "reset": "Approve the password reset"
            // The reason the platform's check is given names the payment (Touch ID shows it; Face ID shows it when
            // it falls back to the passcode): the app's own screen shows the payment before it asks.
            case "authz": Self.paymentReason(payment)
            case "ciba": "Approve the request"
            default: "Approve the sign-in"
            }
        // An approval needs the user; a denial needs nobody and is signed by the key that never prompts.
        let signature =
            pickedNumber == nil
            ? try await sign(purpose: "push", challenge: approval.approvalID, action: action, reason: nil)
            : try await approvalSignature(
                purpose: "push", challenge: approval.approvalID, action: action, reason: reason)
        let state: ApprovalState = try await connection.call(
            "POST",
            "/v1/devices/\(TrifactorClient.segment(id))/approvals/\(TrifactorClient.segment(approval.approvalID))",
            body: ApprovalDecision(decision: decision, number: number, signature: signature.base64EncodedString()),
            headers: try await deviceHeaders(id))
        guard let known = PushApproval.State(rawValue: state.status) else { throw .unexpectedResponse(status: 200) }
        return known
    }

    /// How far the server's clock is ahead of ours, from its `Date` header (whole seconds).
    public var clockSkew: TimeInterval { skew.withLock { $0 } }

    // MARK: Internals

    /// A signature that needs the user: by the approval key, which the platform releases after its own
    /// check showing `reason`; on a device enrolled before approval keys, `UserPresence` then the device key.
    private func approvalSignature(purpose: String, challenge: String, action: String?, reason: String)
        async throws(TrifactorError) -> Data
    {
        if try await isApprovalBound() {
            return try await sign(
                purpose: purpose, challenge: challenge, action: action, tag: approvalTag, reason: reason)
        }
        do { try await presence.verify(reason: reason, policy: approvalPolicy) } catch { throw .presence(error) }
        return try await sign(purpose: purpose, challenge: challenge, action: action, reason: nil)
    }

    /// The public key of `keyTag`, made now when there is none.
    private func ensureKey(_ keyTag: String, releasedBy: PresencePolicy?) async throws(TrifactorError) -> Data {
        do {
            if let existing = try await keys.publicKey(tag: keyTag) { return existing }
            return try await keys.createKey(tag: keyTag, releasedBy: releasedBy)
        } catch {
            if case .presence(let e) = error { throw .presence(e) }
            throw .secretStore(error)
        }
    }

    /// The biometry as the server names it (`biometry` of an enrollment).
    static func wireName(_ biometry: Biometry) -> String? {
        switch biometry {
        case .faceID: "face_id"
        case .touchID: "touch_id"
        case .opticID: "optic_id"
        case .none: nil
        }
    }

    /// The headers that prove a request comes from this device now: the
    /// time (corrected by the skew) and a signature over `<id>:<time>`.
    private func deviceHeaders(_ id: String) async throws(TrifactorError) -> [String: String] {
        let time = Int64((clock.now.timeIntervalSince1970 + clockSkew).rounded(.down))
        let signature = try await sign(purpose: "poll", challenge: "\(id):\(time)", reason: nil)
        return [
            "X-Trifactor-Device-Time": String(time), "X-Trifactor-Device-Signature": signature.base64EncodedString(),
        ]
    }

    private func sign(
        purpose: String, challenge: String, action: String? = nil, tag keyTag: String? = nil,
        reason: String?
    ) async throws(TrifactorError) -> Data {
        let message = Self.message(purpose: purpose, challenge: challenge, action: action)
        do {
            return try await keys.sign(
                Data(message.utf8), tag: keyTag ?? tag, reason: reason ?? "Sign in with this device")
        } catch {
            if case .presence(let e) = error { throw .presence(e) }
            throw .secretStore(error)
        }
    }

    /// The message a device signs (see docs/api/second-factors.md#device-keys: lines joined by `\n`, no final newline).
    public static func message(purpose: String, challenge: String, action: String? = nil) -> String {
        "trifactor-device-signature-v1\npurpose: \(purpose)\nchallenge: \(challenge)\naction: \(action ?? "-")"
    }

    private func noteServerTime(_ response: HTTPResponse) {
        guard let date = response.header("date").flatMap(Self.httpDate) else { return }
        let offset = date.timeIntervalSince(clock.now)
        // The Date header has whole seconds: only a skew beyond 2 s is worth correcting.
        skew.withLock { $0 = abs(offset) > 2 ? offset.rounded() : 0 }
    }

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    public static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
