import Foundation
import Testing

/// The documentation stays navigable: README.md, CONTRIBUTING.md, SECURITY.md
/// and the pages under docs/ link only to files and headings that exist, and
/// the README stays short.
@Suite("Documentation links")
struct DocLinksTests {
    @Test("every relative link in the docs points at a file that exists")
    func relativeTargetsExist() throws {
        let pages = try MarkdownPage.all()
        #expect(pages.count > 3, "no pages under docs/")
        for page in pages {
            for link in page.links {
                guard let resolved = page.resolve(link.target) else { continue }
                if !FileManager.default.fileExists(atPath: resolved.file.path) {
                    Issue.record("\(page.path):\(link.line): \(link.target) does not exist")
                }
            }
        }
    }

    @Test("a #fragment pointing into one of our Markdown pages matches a heading there")
    func fragmentsMatchHeadings() throws {
        let pages = try MarkdownPage.all()
        var byFile: [String: MarkdownPage] = [:]
        for page in pages { byFile[page.url.standardizedFileURL.path] = page }
        for page in pages {
            for link in page.links {
                let file: URL
                let fragment: String
                if link.target.hasPrefix("#") {
                    (file, fragment) = (page.url.standardizedFileURL, String(link.target.dropFirst()))
                } else if let resolved = page.resolve(link.target), let wanted = resolved.fragment,
                    resolved.file.pathExtension == "md"
                {
                    (file, fragment) = (resolved.file, wanted)
                } else {
                    continue
                }
                // A page outside the set read above (a README in a subfolder) is read here; a missing one is the other test's finding.
                let root = MarkdownPage.root.standardizedFileURL.path
                guard
                    let anchors = try byFile[file.path]?.anchors
                        ?? (FileManager.default.fileExists(atPath: file.path)
                            ? MarkdownPage(path: String(file.path.dropFirst(root.count + 1))).anchors : nil)
                else { continue }
                if !anchors.contains(fragment.removingPercentEncoding ?? fragment) {
                    Issue.record(
                        "\(page.path):\(link.line): \(link.target) names no heading of \(file.lastPathComponent)")
                }
            }
        }
    }

    @Test("the README stays short and shows the two commands, make run and make test")
    func readmeIsShort() throws {
        let text = try String(contentsOf: MarkdownPage.root.appendingPathComponent("README.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let count = text.hasSuffix("\n") ? lines.count - 1 : lines.count
        #expect(count <= 220, "README.md has \(count) lines; the manual belongs in docs/")
        let showsRun = lines.contains("make run")
        let showsTest = lines.contains("make test")
        #expect(showsRun, "README.md has no line `make run`")
        #expect(showsTest, "README.md has no line `make test`")
    }

    @Test("the link reader skips code and titles, and slugs headings as GitHub does")
    func readerRules() {
        #expect(MarkdownPage.targets(in: "see [a](b.md \"T\") and ![i](images/x.png)") == ["b.md", "images/x.png"])
        #expect(
            MarkdownPage.targets(in: MarkdownPage.removingInlineCode("`[a](gone.md)` and [b](c.md#d)")) == ["c.md#d"])
        #expect(
            MarkdownPage.slug("Phone verification (Vonage Verify v2 compatible)")
                == "phone-verification-vonage-verify-v2-compatible")
        #expect(
            MarkdownPage.slug("Repeating a request safely: `Idempotency-Key`")
                == "repeating-a-request-safely-idempotency-key")
        #expect(MarkdownPage.heading("## What `make test` runs").map(MarkdownPage.slug) == "what-make-test-runs")
        #expect(
            MarkdownPage.hasScheme("https://example.com") && MarkdownPage.hasScheme("mailto:a@b")
                && !MarkdownPage.hasScheme("docs/a.md"))
    }
}
