internal import CQREncode
import API

/// QR codes drawn by libqrencode, as SVG (one path, dark modules only, a
/// 4-module quiet zone), for authenticator apps to scan.
enum QRCode {
    struct Failure: Error {}

    static func svg(_ text: String) throws -> String {
        guard let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { throw Failure() }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        let margin = 4, size = width + 2 * margin
        var path = ""
        for y in 0..<width {
            for x in 0..<width where code.pointee.data[y * width + x] & 1 == 1 {
                path += "M\(x + margin) \(y + margin)h1v1h-1z"
            }
        }
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(size) \(size)\" shape-rendering=\"crispEdges\">"
            + "<rect width=\"\(size)\" height=\"\(size)\" fill=\"#fff\"/><path d=\"\(path)\" fill=\"#000\"/></svg>"
    }
}
