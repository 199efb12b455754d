import Foundation

/// Values that hold a secret (an API secret, a pending credential, a TOTP
/// secret, a bearer token) print without it: `print`, `dump` and string
/// interpolation show what they are, never the secret.

extension PhoneVerificationClient: CustomStringConvertible, CustomReflectable {
    public var description: String {
        "PhoneVerificationClient(\(connection.server.absoluteString), credentials redacted)"
    }
    public var customMirror: Mirror {
        Mirror(self, children: ["server": connection.server.absoluteString, "authorization": "<redacted>"])
    }
}

extension SecondFactorResolver: CustomStringConvertible, CustomReflectable {
    public var description: String {
        "SecondFactorResolver(\(hints.count) hints, expires \(expiresAt), pending credential redacted)"
    }
    public var customMirror: Mirror {
        Mirror(self, children: ["hints": hints, "expiresAt": expiresAt, "pendingCredential": "<redacted>"])
    }
}

extension PushApproval: CustomStringConvertible, CustomReflectable {
    public var description: String { "PushApproval(\(id), number \(number), pending credential redacted)" }
    public var customMirror: Mirror {
        Mirror(self, children: ["id": id, "number": number, "pendingCredential": "<redacted>"])
    }
}

extension PendingEnrollment: CustomStringConvertible, CustomReflectable {
    public var description: String {
        "PendingEnrollment(\(maskedPhone ?? (secret == nil ? "pending" : "TOTP secret redacted")))"
    }
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "maskedPhone": maskedPhone as Any, "secret": secret == nil ? "nil" : "<redacted>",
                "otpauthURI": otpauthURI == nil ? "nil" : "<redacted>",
            ])
    }
}

extension HTTPRequest: CustomStringConvertible, CustomReflectable {
    public var description: String { "\(method) \(url.path)" }
    public var customMirror: Mirror {
        let shown = headers.map {
            (
                $0.key,
                ["authorization", "x-trifactor-device-signature", "x-trifactor-pending-credential"].contains(
                    $0.key.lowercased()) ? "<redacted>" : $0.value
            )
        }
        return Mirror(
            self,
            children: [
                "method": method, "path": url.path, "headers": Dictionary(uniqueKeysWithValues: shown),
                "body": body.map { "\($0.count) bytes" } ?? "none",
            ])
    }
}
