internal import CQREncode

/// A QR code's modules, encoded once by libqrencode (error correction level M,
/// 8-bit mode, the smallest version that holds the text): a square of dark and
/// light modules without the quiet zone, which each renderer adds.
package struct QRMatrix: Sendable, Equatable {
    /// A text that has no QR code: longer than the largest version holds, or libqrencode could not encode it.
    package struct Failure: Error, Equatable {}

    /// Modules a side: 21 for version 1, 4 more each version up to 177.
    package let size: Int
    /// Row by row, `true` for a dark module.
    private let modules: [Bool]

    /// Encodes `text` (its UTF-8 bytes).
    /// - Throws: `Failure` when libqrencode returns no code.
    package init(encoding text: String) throws(Failure) {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { throw Failure() }
        defer { QRcode_free(code) }
        let size = Int(code.pointee.width)
        // libqrencode keeps a byte a module; its lowest bit says dark.
        modules = (0..<size * size).map { code.pointee.data[$0] & 1 == 1 }
        self.size = size
    }

    /// Whether the module at column `x`, row `y` is dark; any outside the square (the quiet zone) is light.
    package func isDark(x: Int, y: Int) -> Bool {
        x >= 0 && y >= 0 && x < size && y < size && modules[y * size + x]
    }
}
