import QRCode
import Testing

@Suite("Two renderers of one matrix")
struct RendererTests {
    struct Module: Hashable { let x: Int, y: Int }

    static let texts = [
        "HELLO", "otpauth://totp/Trifactor:ann%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=Trifactor", "é ünïcode ✓",
    ]

    /// The dark modules of the matrix, inside its square.
    static func dark(_ code: QRMatrix) -> Set<Module> {
        var modules: Set<Module> = []
        for y in 0..<code.size {
            for x in 0..<code.size where code.isDark(x: x, y: y) { modules.insert(Module(x: x, y: y)) }
        }
        return modules
    }

    /// The dark modules an SVG draws (`Mx yh1v1h-1z` each), the quiet zone taken off, and its side.
    static func drawn(svg: String, margin: Int) throws -> (modules: Set<Module>, side: Int) {
        let side = try #require(svg.firstMatch(of: /viewBox="0 0 (\d+) (\d+)"/).flatMap { Int($0.1) })
        let modules = svg.matches(of: /M(\d+) (\d+)h1v1h-1z/).map {
            Module(x: Int($0.1)! - margin, y: Int($0.2)! - margin)
        }
        return (Set(modules), side)
    }

    /// The dark modules a terminal's half blocks draw (a blank or half block is dark, light on dark), the quiet zone taken off.
    static func drawn(halfBlocks text: String, margin: Int) -> (modules: Set<Module>, lines: [Substring]) {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        var modules: Set<Module> = []
        for (row, line) in lines.enumerated() {
            for (column, block) in line.enumerated() {
                let (top, bottom) =
                    switch block {
                    case " ": (true, true)
                    case "▀": (false, true)
                    case "▄": (true, false)
                    default: (false, false)
                    }
                if top { modules.insert(Module(x: column - margin, y: 2 * row - margin)) }
                if bottom { modules.insert(Module(x: column - margin, y: 2 * row + 1 - margin)) }
            }
        }
        return (modules, lines)
    }

    @Test("the SVG is a square of the matrix and a 4-module quiet zone, one unit square a dark module")
    func svg() throws {
        for text in Self.texts {
            let code = try QRMatrix(encoding: text)
            let (modules, side) = try Self.drawn(svg: code.svg(), margin: 4)
            #expect(side == code.size + 8)
            #expect(modules == Self.dark(code), "\(text)")
        }
    }

    @Test("the terminal text draws two rows of the matrix a line, with a 2-module quiet zone")
    func halfBlocks() throws {
        for text in Self.texts {
            let code = try QRMatrix(encoding: text)
            let (modules, lines) = Self.drawn(halfBlocks: code.halfBlocks(), margin: 2)
            #expect(lines.count == (code.size + 5) / 2 && lines.allSatisfy { $0.count == code.size + 4 })
            #expect(modules == Self.dark(code), "\(text)")
        }
    }

    @Test("both renderers draw the same matrix, whatever quiet zone each is given")
    func sameMatrix() throws {
        for text in Self.texts {
            let code = try QRMatrix(encoding: text)
            for margin in [0, 1, 3] {
                #expect(
                    try Self.drawn(svg: code.svg(margin: margin), margin: margin).modules
                        == Self.drawn(halfBlocks: code.halfBlocks(margin: margin), margin: margin).modules,
                    "\(text), margin \(margin)")
            }
        }
    }
}
