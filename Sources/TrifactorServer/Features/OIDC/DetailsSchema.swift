import Foundation
import JOSE

/// An operator's JSON Schema for one `authorization_details` type (RFC 9396 §5), compiled once and strict: a keyword
/// not implemented here refuses the schema, so no rule is ever believed enforced when it is not. Enforced, as draft
/// 2020-12 says: the keywords in `keywords` and the boolean schemas; ignored: the `annotations`; refused: all else
/// (`format`, `multipleOf`, `$ref`, `allOf`, `prefixItems`, …).
struct DetailsSchema: Sendable {
    /// Why a schema was refused, as a sentence for the operator.
    struct Invalid: Error, Equatable { let sentence: String }

    /// How deep object schemas may nest (`properties`, `items` and `additionalProperties` each go one level down).
    static let maxDepth = 16
    /// The longest string, in UTF-16 code units, that a `pattern` is matched against; a longer one fails.
    static let maxPatternInput = 4096

    /// The root schema's rules, in the order they are checked.
    private let rules: [Rule]

    /// Compiles `json`, an object or boolean schema.
    /// - Throws: `Invalid` naming the first keyword that is unknown, unimplemented or malformed.
    init(json: JSONValue) throws(Invalid) {
        rules = try Self.compile(json, at: "", depth: 0)
    }

    /// Checks `value` against the schema.
    /// - Returns: nil when it conforms; otherwise the first failure as a sentence that begins with its JSON Pointer
    ///   (empty at the root, so a caller may prefix its own name: `authorization_details[0]/amount must be …`).
    ///   Member names in it are cut to 40 characters, and any character RFC 6749 §5.2 keeps out of an
    ///   `error_description` becomes `?`. Work is linear in the size of `value`.
    func validate(_ value: JSONValue) -> String? {
        Self.check(rules, value, at: "")
    }
}

extension DetailsSchema {
    /// The kinds of JSON value `type` names.
    private enum Kind: String {
        case object, array, string, number, integer, boolean, null

        /// Whether `value` is of this kind; a number with no fraction is an `integer`, as in JSON Schema.
        func matches(_ value: JSONValue) -> Bool {
            switch (self, value) {
            case (.object, .object), (.array, .array), (.string, .string), (.boolean, .bool), (.null, .null),
                (.number, .integer), (.number, .number), (.integer, .integer):
                true
            case (.integer, .number(let number)): number.isFinite && number.rounded(.towardZero) == number
            default: false
            }
        }

        /// "a string", "an integer", "null".
        var phrase: String { self == .null ? "null" : ("aeiou".contains(rawValue.prefix(1)) ? "an " : "a ") + rawValue }
    }

    /// Which side of a limit a value must be on, named as a failure says it.
    private enum Bound: String {
        case atLeast = "at least", atMost = "at most", above = "greater than", below = "less than"

        /// Whether a value ordered `order` (-1, 0, 1) against the limit passes.
        func holds(_ order: Int) -> Bool {
            switch self {
            case .atLeast: order >= 0
            case .atMost: order <= 0
            case .above: order > 0
            case .below: order < 0
            }
        }
    }

    /// What `minLength`, `maxItems`, `minProperties`, … count: a string's Unicode scalars (code points, as JSON
    /// Schema counts), an array's items or an object's members.
    private enum Measure: String {
        case characters, items, members

        /// The count in `value`, or nil when `value` is not of the kind this measures.
        func size(of value: JSONValue) -> Int? {
            switch (self, value) {
            case (.characters, .string(let text)): text.unicodeScalars.count
            case (.items, .array(let items)): items.count
            case (.members, .object(let members)): members.count
            default: nil
            }
        }
    }

    /// One compiled keyword. A rule for one kind of value (`minLength`, `items`, …) passes values of other kinds.
    private enum Rule: Sendable {
        case never
        case types([Kind])
        case constant(JSONValue, shown: String)
        case choices(Set<JSONValue>, shown: String)
        case size(Measure, Bound, Int)
        case pattern(NSRegularExpression, shown: String)
        case bound(JSONValue, Bound)
        case uniqueItems
        case items([Rule])
        case required([String])
        case members([String: [Rule]], additional: [Rule])
    }

    /// Keywords ignored as annotations.
    private static let annotations: Set = ["$schema", "$id", "title", "description", "$comment", "examples", "default"]
    /// Keywords enforced.
    private static let keywords: Set<String> = [
        "type", "enum", "const", "minLength", "maxLength", "pattern", "minimum", "maximum", "exclusiveMinimum",
        "exclusiveMaximum", "items", "minItems", "maxItems", "uniqueItems", "properties", "required",
        "additionalProperties", "minProperties", "maxProperties",
    ]

    /// The rules of the schema `json` found at schema pointer `path`, `depth` levels below the root.
    private static func compile(_ json: JSONValue, at path: String, depth: Int) throws(Invalid) -> [Rule] {
        if case .bool(let accepts) = json { return accepts ? [] : [.never] }
        guard depth <= maxDepth else { throw refusal(path, "schemas nest deeper than \(maxDepth) levels.") }
        guard case .object(let o) = json else { throw refusal(path, "a schema must be an object, true or false.") }
        if let unknown = o.keys.sorted().first(where: { !keywords.contains($0) && !annotations.contains($0) }) {
            throw refusal(path, "\(unknown) is not implemented by this server, so it cannot be enforced.")
        }
        var rules: [Rule] = []
        if let type = o["type"] {
            let names = type.string.map { [$0] } ?? type.strings ?? []
            let kinds = names.compactMap(Kind.init(rawValue:))
            guard !kinds.isEmpty, kinds.count == names.count, Set(names).count == names.count else {
                throw refusal(path, "type must be one or more distinct JSON types (object, string, integer, …).")
            }
            rules.append(.types(kinds))
        }
        if let value = o["const"] { rules.append(.constant(canonical(value), shown: shown([value]) ?? "its const")) }
        if let value = o["enum"] {
            guard case .array(let values) = value, !values.isEmpty else {
                throw refusal(path, "enum must be a non-empty array.")
            }
            let list = shown(values).map { "one of \($0)" } ?? "one of the values its enum lists"
            rules.append(.choices(Set(values.map(canonical)), shown: list))
        }
        let sizes: [(String, Measure, Bound)] = [
            ("minLength", .characters, .atLeast), ("maxLength", .characters, .atMost), ("minItems", .items, .atLeast),
            ("maxItems", .items, .atMost), ("minProperties", .members, .atLeast), ("maxProperties", .members, .atMost),
        ]
        for (key, measure, bound) in sizes {
            guard let value = o[key] else { continue }
            guard let n = value.integer, n >= 0 else { throw refusal(path, "\(key) must be a non-negative integer.") }
            rules.append(.size(measure, bound, Int(n)))
        }
        if let value = o["pattern"] {
            guard let text = value.string, let regex = try? NSRegularExpression(pattern: text) else {
                throw refusal(path, "pattern must be a valid regular expression.")
            }
            rules.append(.pattern(regex, shown: shown([value]).map { "the pattern \($0)" } ?? "its schema's pattern"))
        }
        let bounds: [(String, Bound)] = [
            ("minimum", .atLeast), ("maximum", .atMost), ("exclusiveMinimum", .above), ("exclusiveMaximum", .below),
        ]
        for (key, bound) in bounds {
            guard let limit = o[key] else { continue }
            guard compare(limit, limit) != nil else { throw refusal(path, "\(key) must be a number.") }
            rules.append(.bound(limit, bound))
        }
        if let value = o["uniqueItems"] {
            guard case .bool(let unique) = value else { throw refusal(path, "uniqueItems must be true or false.") }
            if unique { rules.append(.uniqueItems) }
        }
        if let value = o["items"] {
            if case .array = value { throw refusal(path, "items must be one schema (tuples are not implemented).") }
            rules.append(.items(try compile(value, at: path + "/items", depth: depth + 1)))
        }
        if let value = o["required"] {
            guard let names = value.strings, Set(names).count == names.count else {
                throw refusal(path, "required must be an array of distinct strings.")
            }
            rules.append(.required(names))
        }
        var properties: [String: [Rule]] = [:]
        if let value = o["properties"] {
            guard let members = value.object else { throw refusal(path, "properties must be an object of schemas.") }
            for (name, schema) in members.sorted(by: { $0.key < $1.key }) {
                properties[name] = try compile(schema, at: path + "/properties/" + segment(name), depth: depth + 1)
            }
        }
        let extra = o["additionalProperties"] ?? true
        let additional = try compile(extra, at: path + "/additionalProperties", depth: depth + 1)
        if !properties.isEmpty || !additional.isEmpty { rules.append(.members(properties, additional: additional)) }
        return rules
    }

    /// A refusal of the schema at `path` for the reason `text`.
    private static func refusal(_ path: String, _ text: String) -> Invalid {
        Invalid(sentence: (path.isEmpty ? "In the schema, " : "In the schema at \(path), ") + text)
    }

    /// The first rule `value`, found at `path`, breaks, as a sentence; nil when it breaks none.
    private static func check(_ rules: [Rule], _ value: JSONValue, at path: String) -> String? {
        rules.lazy.compactMap { fault($0, value, at: path) }.first
    }

    /// How `value`, found at `path`, breaks `rule`, or nil when it does not.
    private static func fault(_ rule: Rule, _ value: JSONValue, at path: String) -> String? {
        switch (rule, value) {
        case (.never, _): return "\(path) is not allowed here."
        case (.types(let kinds), _):
            if kinds.contains(where: { $0.matches(value) }) { return nil }
            return "\(path) must be \(list(kinds.map(\.phrase)))."
        case (.constant(let constant, let shown), _):
            return canonical(value) == constant ? nil : "\(path) must be \(shown)."
        case (.choices(let choices, let shown), _):
            return choices.contains(canonical(value)) ? nil : "\(path) must be \(shown)."
        case (.size(let measure, let bound, let n), _):
            guard let size = measure.size(of: value), !bound.holds(size < n ? -1 : size == n ? 0 : 1) else {
                return nil
            }
            return "\(path) must have \(bound.rawValue) \(n) \(measure.rawValue.dropLast(n == 1 ? 1 : 0))."
        case (.pattern(let regex, let shown), .string(let text)):
            let length = text.utf16.count
            guard length <= maxPatternInput else {
                return "\(path) is longer than \(maxPatternInput) characters, too long to match a pattern."
            }
            let match = regex.firstMatch(in: text, range: NSRange(location: 0, length: length))
            return match == nil ? "\(path) must match \(shown)." : nil
        case (.bound(let limit, let bound), .integer), (.bound(let limit, let bound), .number):
            if let order = compare(value, limit), bound.holds(order) { return nil }
            return "\(path) must be \(bound.rawValue) \(shown([limit]) ?? "its limit")."
        case (.uniqueItems, .array(let items)):
            var seen: Set<JSONValue> = []
            for (index, item) in items.enumerated() where !seen.insert(canonical(item)).inserted {
                return "\(path)/\(index) repeats an earlier item."
            }
            return nil
        case (.items(let rules), .array(let items)):
            return items.enumerated().lazy.compactMap { check(rules, $1, at: "\(path)/\($0)") }.first
        case (.required(let names), .object(let members)):
            guard let missing = names.first(where: { members[$0] == nil }) else { return nil }
            return "\(path)/\(segment(missing)) is required."
        case (.members(let properties, let additional), .object(let members)):
            let sorted = members.sorted { $0.key < $1.key }.lazy
            return sorted.compactMap { check(properties[$0] ?? additional, $1, at: "\(path)/\(segment($0))") }.first
        default: return nil
        }
    }

    /// -1, 0 or 1 as the number `a` is below, equal to or above the number `b`, exactly (no rounding of a large
    /// integer to a double); nil when either is no number or is NaN. An infinite limit never or always holds.
    private static func compare(_ a: JSONValue, _ b: JSONValue) -> Int? {
        switch (a, b) {
        case (.integer(let x), .integer(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.number(let x), .number(let y)): return x.isNaN || y.isNaN ? nil : x < y ? -1 : x == y ? 0 : 1
        case (.number, .integer): return compare(b, a).map { -$0 }
        case (.integer(let x), .number(let y)) where !y.isNaN:
            if y >= 0x1p63 || y < -0x1p63 { return y > 0 ? -1 : 1 }
            let whole = Int64(y.rounded(.down))  // Exact: y is within Int64's range.
            return x != whole ? (x < whole ? -1 : 1) : (Double(whole) == y ? 0 : -1)
        default: return nil
        }
    }

    /// `value` with every whole number as an `integer`, so equality and hashing follow JSON Schema (1 == 1.0).
    private static func canonical(_ value: JSONValue) -> JSONValue {
        switch value {
        case .number(let x) where x.rounded(.towardZero) == x && x >= -0x1p63 && x < 0x1p63: .integer(Int64(x))
        case .array(let items): .array(items.map(canonical))
        case .object(let members): .object(members.mapValues(canonical))
        default: value
        }
    }

    /// Scalars as a failure may show them ("a, b or c"); nil when one is no scalar or not safe and short to show.
    private static func shown(_ values: [JSONValue]) -> String? {
        var words: [String] = []
        for value in values {
            let word: String
            switch value {
            case .null: word = "null"
            case .bool(let flag): word = flag ? "true" : "false"
            case .integer(let n): word = String(n)
            case .number(let x): word = x.description.hasSuffix(".0") ? String(x.description.dropLast(2)) : "\(x)"
            case .string(let text): word = text
            case .array, .object: return nil
            }
            guard !word.isEmpty, word.count <= 80, word.unicodeScalars.allSatisfy(isSafe) else { return nil }
            words.append(word)
        }
        return words.isEmpty || words.count > 10 ? nil : list(words)
    }

    /// "a", "a or b", "a, b or c".
    private static func list(_ words: [String]) -> String {
        words.dropLast().joined(separator: ", ") + (words.count > 1 ? " or " : "") + (words.last ?? "")
    }

    /// A member name as a JSON Pointer segment (RFC 6901: `~` as `~0`, `/` as `~1`), cut to 40 characters, with
    /// characters unsafe in an `error_description` as `?`.
    private static func segment(_ name: String) -> String {
        let escaped = name.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
        return String(String.UnicodeScalarView(escaped.prefix(40).unicodeScalars.map { isSafe($0) ? $0 : "?" }))
    }

    /// Whether RFC 6749 §5.2 allows `scalar` in an `error_description`: printable ASCII but `"` and `\`.
    private static func isSafe(_ scalar: Unicode.Scalar) -> Bool {
        (0x20...0x7E).contains(scalar.value) && scalar != "\"" && scalar != "\\"
    }
}
