import Foundation

/// One Markdown file of the repository, read for its links and headings the
/// way a forge renders it: nothing inside fenced code blocks or inline code
/// counts.
struct MarkdownPage {
    /// A link or image target as written, with the line it is on (1-based).
    struct Link {
        let line: Int
        let target: String
    }

    /// The path from the repository root (`docs/api/README.md`).
    let path: String
    let url: URL
    let links: [Link]
    /// The anchors its headings get (GitHub's slugs, duplicates numbered).
    let anchors: Set<String>

    /// The repository root: three folders up from this file (`Tests/DocsTests/`).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `README.md`, `CONTRIBUTING.md`, `SECURITY.md` and every `*.md` under `docs/`, sorted by path.
    /// - Throws: when one of them cannot be read as UTF-8.
    static func all() throws -> [MarkdownPage] {
        var paths = ["README.md", "CONTRIBUTING.md", "SECURITY.md"]
        let docs = root.appendingPathComponent("docs")
        if let walker = FileManager.default.enumerator(at: docs, includingPropertiesForKeys: nil) {
            for case let url as URL in walker where url.pathExtension == "md" {
                paths.append("docs/" + url.path.dropFirst(docs.path.count + 1))
            }
        }
        return try paths.sorted().map { try MarkdownPage(path: $0) }
    }

    /// Reads the page at `path` from the repository root.
    /// - Throws: when the file is missing or not UTF-8.
    init(path: String) throws {
        self.path = path
        url = Self.root.appendingPathComponent(path)
        let text = try String(contentsOf: url, encoding: .utf8)
        var links: [Link] = []
        var anchors: Set<String> = []
        var seen: [String: Int] = [:]
        var fence: String?
        for (index, raw) in text.components(separatedBy: "\n").enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if let open = fence {
                if line.hasPrefix(open) { fence = nil }
                continue
            }
            if line.hasPrefix("```") || line.hasPrefix("~~~") {
                fence = String(line.prefix(3))
                continue
            }
            // A heading keeps the text of its code spans (GitHub slugs "What `make test` runs" as what-make-test-runs).
            if let heading = Self.heading(raw) {
                let slug = Self.slug(heading)
                let count = seen[slug, default: 0]
                seen[slug] = count + 1
                anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
            }
            links += Self.targets(in: Self.removingInlineCode(raw)).map { Link(line: index + 1, target: $0) }
        }
        self.links = links
        self.anchors = anchors
    }

    /// `line` with every code span (a run of backticks up to the next run of
    /// the same length) taken out.
    static func removingInlineCode(_ line: String) -> String {
        let chars = Array(line)
        var out = ""
        var i = 0
        while i < chars.count {
            guard chars[i] == "`" else {
                out.append(chars[i])
                i += 1
                continue
            }
            var run = 0
            while i + run < chars.count, chars[i + run] == "`" { run += 1 }
            var j = i + run
            var closed: Int?
            while j < chars.count {
                if chars[j] == "`" {
                    var other = 0
                    while j + other < chars.count, chars[j + other] == "`" { other += 1 }
                    if other == run {
                        closed = j + other
                        break
                    }
                    j += other
                } else {
                    j += 1
                }
            }
            if let closed {
                out.append(" ")
                i = closed
            } else {
                out.append(contentsOf: String(repeating: "`", count: run))
                i += run
            }
        }
        return out
    }

    /// The targets of `[text](target)`, `![alt](target)` and `[label]: target` in `line`,
    /// without a `"title"` or angle brackets.
    static func targets(in line: String) -> [String] {
        var found: [String] = []
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("["), let close = trimmed.range(of: "]: ") {
            let rest = trimmed[close.upperBound...].trimmingCharacters(in: .whitespaces)
            if let first = rest.split(separator: " ").first { found.append(String(first)) }
        }
        let chars = Array(line)
        var i = 0
        while i + 1 < chars.count {
            guard chars[i] == "]", chars[i + 1] == "(" else {
                i += 1
                continue
            }
            var j = i + 2
            var depth = 0
            var target = ""
            while j < chars.count {
                let c = chars[j]
                if c == "(" { depth += 1 }
                if c == ")" {
                    if depth == 0 { break }
                    depth -= 1
                }
                target.append(c)
                j += 1
            }
            i = j
            target = target.trimmingCharacters(in: .whitespaces)
            if target.hasPrefix("<"), let end = target.firstIndex(of: ">") {
                target = String(target[target.index(after: target.startIndex)..<end])
            } else if let space = target.firstIndex(where: { $0 == " " || $0 == "\t" }) {
                target = String(target[..<space])  // drops a "title"
            }
            if !target.isEmpty { found.append(target) }
        }
        return found
    }

    /// The text of an ATX heading (`## Text ##`), or nil for any other line.
    static func heading(_ line: String) -> String? {
        let trimmed = line.drop { $0 == " " }
        guard line.count - trimmed.count <= 3 else { return nil }
        let level = trimmed.prefix { $0 == "#" }.count
        guard (1...6).contains(level) else { return nil }
        let rest = trimmed.dropFirst(level)
        guard rest.isEmpty || rest.first == " " else { return nil }
        var text = rest.trimmingCharacters(in: .whitespaces)
        while text.hasSuffix("#") { text.removeLast() }
        return text.trimmingCharacters(in: .whitespaces)
    }

    /// GitHub's anchor for a heading: lower case, punctuation dropped (but
    /// `-` and `_`), each space a `-`.
    static func slug(_ heading: String) -> String {
        var slug = ""
        for character in heading.lowercased() {
            if character == " " {
                slug.append("-")
            } else if character == "-" || character == "_" || character.isLetter || character.isNumber {
                slug.append(character)
            }
        }
        return slug
    }

    /// Whether `target` leaves the repository (`https:`, `mailto:`, …).
    static func hasScheme(_ target: String) -> Bool {
        guard let colon = target.firstIndex(of: ":") else { return false }
        let scheme = target[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter else { return false }
        return scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "+.-".contains($0)) }
    }

    /// The file `target` names, resolved from this page's folder (from the root for `/…`),
    /// and its `#fragment`; nil for a target with a scheme or a bare `#anchor`.
    func resolve(_ target: String) -> (file: URL, fragment: String?)? {
        guard !Self.hasScheme(target), !target.hasPrefix("#") else { return nil }
        let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)
        let path = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        let base = path.hasPrefix("/") ? Self.root : url.deletingLastPathComponent()
        let file = base.appendingPathComponent(path).standardizedFileURL
        return (file, parts.count > 1 ? String(parts[1]) : nil)
    }
}
