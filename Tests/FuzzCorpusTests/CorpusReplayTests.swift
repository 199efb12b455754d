import Foundation
import FuzzHarnesses
import Testing

/// Every input `make fuzz` kept (the seeds from the specs' test vectors, what
/// coverage grew on, and every crash ever found) goes through its harness
/// again: a parser that crashes on one of them fails the suite.
@Suite("Fuzz corpus replay")
struct CorpusReplayTests {
    static let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fuzz/corpus")

    @Test("each harness replays its corpus without a crash", arguments: FuzzHarness.allCases)
    func replay(harness: FuzzHarness) throws {
        let folder = Self.corpus.appendingPathComponent(harness.rawValue)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files.count >= 5, "fuzz/corpus/\(harness.rawValue) holds \(files.count) inputs; run fuzz/seed.py")
        for file in files {
            let bytes = try #require(FileManager.default.contents(atPath: folder.appendingPathComponent(file).path))
            harness.run(Array(bytes))
        }
    }
}
