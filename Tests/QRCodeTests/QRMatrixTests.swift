import QRCode
import Testing

@Suite("One QR matrix, encoded once")
struct QRMatrixTests {
    /// Whether the 7×7 finder pattern with its top-left module at (`left`, `top`) is there: a dark ring, a light
    /// ring, a dark 3×3 centre, and the light separator around it inside the square.
    static func hasFinder(_ code: QRMatrix, left: Int, top: Int) -> Bool {
        for dy in -1...7 {
            for dx in -1...7 {
                let (x, y) = (left + dx, top + dy)
                guard x >= 0, y >= 0, x < code.size, y < code.size else { continue }
                // Rings around the centre: 0 and 1 the dark centre, 2 light, 3 the dark ring, 4 the light separator.
                let ring = max(abs(dx - 3), abs(dy - 3))
                if code.isDark(x: x, y: y) != (ring <= 1 || ring == 3) { return false }
            }
        }
        return true
    }

    @Test("HELLO is a version 1 code: 21 modules a side")
    func versionOne() throws {
        #expect(try QRMatrix(encoding: "HELLO").size == 21)
    }

    @Test(
        "the three finder patterns stand in the top-left, top-right and bottom-left corners, and none in the bottom-right"
    )
    func finderPatterns() throws {
        for text in ["HELLO", "otpauth://totp/Trifactor:ann%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Trifactor"] {
            let code = try QRMatrix(encoding: text)
            let far = code.size - 7
            #expect(
                Self.hasFinder(code, left: 0, top: 0) && Self.hasFinder(code, left: far, top: 0)
                    && Self.hasFinder(code, left: 0, top: far), "\(text)")
            #expect(!Self.hasFinder(code, left: far, top: far), "\(text)")
        }
    }

    @Test("the timing patterns alternate dark and light along row 6 and column 6 between the finder patterns")
    func timingPatterns() throws {
        let code = try QRMatrix(encoding: "HELLO")
        for i in 8..<(code.size - 8) {
            #expect(code.isDark(x: i, y: 6) == i.isMultiple(of: 2))
            #expect(code.isDark(x: 6, y: i) == i.isMultiple(of: 2))
        }
    }

    @Test("a longer text takes a larger version, 4 modules a side more each; every module outside the square is light")
    func versionsAndQuietZone() throws {
        let small = try QRMatrix(encoding: "HELLO")
        let large = try QRMatrix(encoding: String(repeating: "x", count: 300))
        #expect(large.size > small.size && (large.size - 17).isMultiple(of: 4) && large.size <= 177)
        #expect(!small.isDark(x: -1, y: 0) && !small.isDark(x: 0, y: 21) && !small.isDark(x: 21, y: 21))
    }

    @Test("a text longer than the largest version holds has no code")
    func tooLong() {
        #expect(throws: QRMatrix.Failure.self) { try QRMatrix(encoding: String(repeating: "x", count: 3_000)) }
    }
}
