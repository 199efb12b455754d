import QRCode

/// The TOTP enrollment's QR code as SVG, for authenticator apps to scan (the
/// `QRCode` module encodes it and draws it, with a 4-module quiet zone).
enum QRCode {
    /// - Throws: `QRMatrix.Failure` when `text` has no QR code.
    static func svg(_ text: String) throws -> String {
        try QRMatrix(encoding: text).svg()
    }
}
