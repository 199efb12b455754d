import Foundation
import ServerTestSupport

/// A device key made and used by the `openssl` command line tool, as a
/// device would: the server sees only its public key and its signatures.
struct DeviceKey {
    let directory: URL
    var privateKey: URL { directory.appendingPathComponent("key.pem") }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("device-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        _ = try Self.openssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", privateKey.path])
    }

    /// SubjectPublicKeyInfo DER, base64.
    var publicKey: String {
        get throws {
            try Self.openssl(["pkey", "-in", privateKey.path, "-pubout", "-outform", "DER"]).base64EncodedString()
        }
    }

    /// The same public key with its point compressed (another valid encoding of it).
    var compressedPublicKey: String {
        get throws {
            try Self.openssl(["ec", "-in", privateKey.path, "-pubout", "-outform", "DER", "-conv_form", "compressed"])
                .base64EncodedString()
        }
    }

    /// An ES256 signature (DER, base64) over the device message.
    func sign(purpose: String, challenge: String, action: String? = nil) throws -> String {
        let message =
            "trifactor-device-signature-v1\npurpose: \(purpose)\nchallenge: \(challenge)\naction: \(action ?? "-")"
        let file = directory.appendingPathComponent("message-\(UUID().uuidString)")
        try Data(message.utf8).write(to: file)
        return try Self.openssl(["dgst", "-sha256", "-sign", privateKey.path, file.path]).base64EncodedString()
    }

    private static func openssl(_ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw HTTPTestClient.Failure(description: "openssl \(arguments.first ?? "") failed")
        }
        return data
    }
}
