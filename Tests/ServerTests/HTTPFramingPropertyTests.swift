import Foundation
import Glibc
import HTTP
import ServerTestSupport
import Testing
import TrifactorTestSupport

@testable import TrifactorServer

/// Random pipelines of requests, good and bad, sent in random pieces: every
/// request before the first bad one is answered once, in order and
/// correctly; the bad one is answered and the connection closes; a body cut
/// short gets the connection closed (at the latest at the body deadline). Nothing is answered twice, nothing
/// after a bad request is served.
@Suite("HTTP framing properties")
struct HTTPFramingPropertyTests {
    /// A reproducible generator (SplitMix64).
    struct Seeded: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    enum Kind: CaseIterable {
        case get, post, chunked, repeatedLength
        case conflictingLengths, lengthAndChunked, unknownCoding, twoHosts, spaceInName, escapedNUL, tooManyArguments
        case truncatedBody

        var isGood: Bool { [.get, .post, .chunked, .repeatedLength].contains(self) }
        /// The answer expected, nil when the connection is to close without one.
        var status: Int? {
            switch self {
            case .get: 200
            case .post, .chunked, .repeatedLength: 422
            case .conflictingLengths, .lengthAndChunked, .twoHosts, .spaceInName, .escapedNUL: 400
            case .unknownCoding: 501
            case .tooManyArguments: 414
            case .truncatedBody: nil
            }
        }
    }

    /// The bytes of one request of `kind`; `last` adds `Connection: close`.
    static func request(_ kind: Kind, last: Bool, using rng: inout Seeded) -> [UInt8] {
        func name(_ text: String) -> String { Bool.random(using: &rng) ? text : text.lowercased() }
        let close = last ? "\(name("Connection")): close\r\n" : ""
        let json = "\(name("Content-Type")): application/json\r\n"
        var text: String
        switch kind {
        case .get:
            text = "GET /health HTTP/1.1\r\n\(name("Host")): x\r\n\(close)\r\n"
        case .post:
            text = "POST /v1/sessions HTTP/1.1\r\nHost: x\r\n\(json)\(name("Content-Length")): 2\r\n\(close)\r\n{}"
        case .chunked:
            let split = Int.random(in: 0...2, using: &rng)
            let parts = [String("{}".prefix(split)), String("{}".dropFirst(split))].filter { !$0.isEmpty }
            text =
                "POST /v1/sessions HTTP/1.1\r\nHost: x\r\n\(json)\(name("Transfer-Encoding")): chunked\r\n\(close)\r\n"
                + parts.map { "\($0.count)\r\n\($0)\r\n" }.joined() + "0\r\n\r\n"
        case .repeatedLength:
            text =
                "POST /v1/sessions HTTP/1.1\r\nHost: x\r\n\(json)Content-Length: 2\r\n\(name("Content-Length")): 2\r\n\(close)\r\n{}"
        case .conflictingLengths:
            text = "POST /v1/sessions HTTP/1.1\r\nHost: x\r\n\(json)Content-Length: 2\r\nContent-Length: 9\r\n\r\n{}"
        case .lengthAndChunked:
            text =
                "POST /v1/sessions HTTP/1.1\r\nHost: x\r\n\(json)Content-Length: 7\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
        case .unknownCoding:
            text = "POST /v1/sessions HTTP/1.1\r\nHost: x\r\n\(json)Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"
        case .twoHosts:
            text = "GET /health HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"
        case .spaceInName:
            text = "GET /health HTTP/1.1\r\nHost: x\r\nX-Forwarded-For : 1.2.3.4\r\n\r\n"
        case .escapedNUL:
            text = "GET /health%00.json HTTP/1.1\r\nHost: x\r\n\r\n"
        case .tooManyArguments:
            text = "GET /health?\(String(repeating: "a=1&", count: 100)) HTTP/1.1\r\nHost: x\r\n\r\n"
        case .truncatedBody:
            text = "POST /v1/sessions HTTP/1.1\r\nHost: x\r\n\(json)Content-Length: 10\r\n\r\n{\"a\""
        }
        return Array(text.utf8)
    }

    @Test(
        "random pipelines of good and bad requests in random pieces: each answered once, in order, or the connection closed"
    )
    func randomPipelines() throws {
        var rng = Seeded(state: 2026_12_01)
        // A body cut short while its connection is suspended is only noticed at the body deadline.
        let configuration = TestServer.configuration { $0.http.bodyTimeout = 2 }
        try Backend.all[0].withServer(configuration) { server in
            for round in 0..<120 {
                // Good requests, then possibly one bad or truncated one that ends the connection.
                let goods = (0..<Int.random(in: 0...3, using: &rng)).map { _ in
                    [Kind.get, .post, .chunked, .repeatedLength].randomElement(using: &rng)!
                }
                let ending =
                    Bool.random(using: &rng) ? Kind.allCases.filter { !$0.isGood }.randomElement(using: &rng) : nil
                let kinds = goods + (ending.map { [$0] } ?? [])
                guard !kinds.isEmpty else { continue }
                var bytes: [UInt8] = []
                for (index, kind) in kinds.enumerated() {
                    bytes += Self.request(kind, last: ending == nil && index == kinds.count - 1, using: &rng)
                }
                let client = try HTTPTestClient(port: server.port, timeout: 5)
                // In one piece, or cut in up to 4 random places with a pause between pieces.
                var cuts = (0..<Int.random(in: 0...4, using: &rng)).map { _ in
                    Int.random(in: 1..<bytes.count, using: &rng)
                }.sorted()
                cuts.append(bytes.count)
                var start = 0
                for cut in cuts where cut > start {
                    try client.send(Array(bytes[start..<cut]))
                    start = cut
                    usleep(UInt32.random(in: 0...2000, using: &rng))
                }
                if ending == .truncatedBody { client.finishSending() }
                let received = try #require(client.readToEnd(), "round \(round) \(kinds): the connection stayed open")
                let responses = try #require(
                    RawResponse.parseAll(received),
                    "round \(round) \(kinds): \(String(decoding: received, as: UTF8.self))")
                let expected = kinds.compactMap(\.status)
                #expect(responses.map(\.status) == expected, "round \(round) \(kinds)")
                #expect(
                    Set(responses.compactMap { $0.header("x-request-id") }).count == responses.count,
                    "round \(round): an id served twice")
            }
            #expect(try server.get("/health").status == 200)
        }
    }
}
