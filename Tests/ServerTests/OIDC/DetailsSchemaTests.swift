import JOSE
import Testing

@testable import TrifactorServer

/// Compiles `json`, failing the test when it is refused.
private func schema(_ json: JSONValue) throws -> DetailsSchema {
    try DetailsSchema(json: json)
}

/// The sentence `json` is refused with, or nil when it compiles.
private func refusal(_ json: JSONValue) -> String? {
    do {
        _ = try DetailsSchema(json: json)
        return nil
    } catch {
        return error.sentence
    }
}

/// `value` wrapped as member `v` of an object, validated against `{properties: {v: json}}`.
private func check(_ json: JSONValue, _ value: JSONValue) throws -> String? {
    try schema(["properties": ["v": json]]).validate(["v": value])
}

@Suite struct DetailsSchemaTests {
    @Test func typeEachKind() throws {
        let values: [String: JSONValue] = [
            "object": ["a": 1], "array": [1], "string": "s", "number": .number(1.5), "integer": 3,
            "boolean": true, "null": .null,
        ]
        for (kind, good) in values {
            #expect(try check(["type": .string(kind)], good) == nil, "\(kind)")
        }
        #expect(try check(["type": "object"], [1]) == "/v must be an object.")
        #expect(try check(["type": "array"], "x") == "/v must be an array.")
        #expect(try check(["type": "string"], 1) == "/v must be a string.")
        #expect(try check(["type": "number"], "1") == "/v must be a number.")
        #expect(try check(["type": "integer"], .null) == "/v must be an integer.")
        #expect(try check(["type": "boolean"], 0) == "/v must be a boolean.")
        #expect(try check(["type": "null"], false) == "/v must be null.")
        #expect(try check(["type": ["string", "null"]], .null) == nil)
        #expect(try check(["type": ["string", "null"]], 1) == "/v must be a string or null.")
        #expect(try check(["type": ["string", "integer", "null"]], true) == "/v must be a string, an integer or null.")
    }

    @Test func integerVersusNumber() throws {
        #expect(try check(["type": "integer"], .number(5.0)) == nil)
        #expect(try check(["type": "integer"], .number(-0.0)) == nil)
        #expect(try check(["type": "integer"], .number(5.5)) == "/v must be an integer.")
        #expect(try check(["type": "integer"], .number(1e300)) == nil)
        #expect(try check(["type": "number"], 5) == nil)
        #expect(try check(["type": "number"], .number(5.5)) == nil)
        #expect(try check(["type": "number"], true) == "/v must be a number.")
        #expect(try check(["type": "integer"], false) == "/v must be an integer.")
    }

    @Test func rootPathIsEmpty() throws {
        #expect(try schema(["type": "object"]).validate([1]) == " must be an object.")
        #expect(try schema(true).validate("anything") == nil)
        #expect(try schema(false).validate(.null) == " is not allowed here.")
        #expect(try schema([:]).validate(["a": [1, 2]]) == nil)
    }

    @Test func enumAndConst() throws {
        let colors: JSONValue = ["enum": ["red", "green", 1, .null]]
        #expect(try check(colors, "green") == nil)
        #expect(try check(colors, .number(1.0)) == nil)
        #expect(try check(colors, .null) == nil)
        #expect(try check(colors, "blue") == "/v must be one of red, green, 1 or null.")
        #expect(try check(["enum": [["a": 1]]], ["a": .number(1)]) == nil)
        #expect(try check(["enum": [["a": 1]]], ["a": 2]) == "/v must be one of the values its enum lists.")
        #expect(try check(["const": "x"], "x") == nil)
        #expect(try check(["const": "x"], "y") == "/v must be x.")
        #expect(try check(["const": .number(2.5)], .number(2.5)) == nil)
        #expect(try check(["const": 2], .number(2)) == nil)
        #expect(try check(["const": 2], "2") == "/v must be 2.")
        #expect(try check(["const": [1, 2]], [1, 2]) == nil)
        #expect(try check(["const": [1, 2]], [2, 1]) == "/v must be its const.")
        #expect(try check(["const": "a\\b"], "b") == "/v must be its const.")
    }

    @Test func lengths() throws {
        #expect(try check(["minLength": 2], "ab") == nil)
        #expect(try check(["minLength": 2], "a") == "/v must have at least 2 characters.")
        #expect(try check(["maxLength": 2], "ab") == nil)
        #expect(try check(["maxLength": 2], "abc") == "/v must have at most 2 characters.")
        // Code points: one emoji is one, an e with a combining accent is two.
        #expect(try check(["maxLength": 1], "👍") == nil)
        #expect(try check(["maxLength": 1], "e\u{301}") == "/v must have at most 1 character.")
        #expect(try check(["minLength": 5], 3) == nil)
    }

    @Test func pattern() throws {
        #expect(try check(["pattern": "[0-9]"], "ab1c") == nil)
        #expect(try check(["pattern": "^[0-9]+$"], "123") == nil)
        #expect(try check(["pattern": "^[0-9]+$"], "12a") == "/v must match the pattern ^[0-9]+$.")
        #expect(try check(["pattern": "^\\d+$"], "x") == "/v must match its schema's pattern.")
        #expect(try check(["pattern": "^a"], 5) == nil)
        let long = String(repeating: "a", count: 4097)
        #expect(
            try check(["pattern": "a"], .string(long))
                == "/v is longer than 4096 characters, too long to match a pattern.")
        #expect(try check(["pattern": "a"], .string(String(long.dropLast()))) == nil)
    }

    @Test func numericBounds() throws {
        #expect(try check(["minimum": 3], 3) == nil)
        #expect(try check(["minimum": 3], .number(2.999)) == "/v must be at least 3.")
        #expect(try check(["maximum": .number(2.5)], .number(2.5)) == nil)
        #expect(try check(["maximum": .number(2.5)], 3) == "/v must be at most 2.5.")
        #expect(try check(["exclusiveMinimum": 0], .number(0.001)) == nil)
        #expect(try check(["exclusiveMinimum": 0], 0) == "/v must be greater than 0.")
        #expect(try check(["exclusiveMaximum": .number(10)], .number(9.5)) == nil)
        #expect(try check(["exclusiveMaximum": .number(10)], 10) == "/v must be less than 10.")
        #expect(try check(["minimum": 3], "1") == nil)
        // Exact, where a double would round: 2^53 + 1 is above 2^53.
        #expect(try check(["maximum": .number(9_007_199_254_740_992)], 9_007_199_254_740_993) != nil)
        #expect(try check(["maximum": 9_007_199_254_740_992], .number(9_007_199_254_740_992)) == nil)
        #expect(try check(["minimum": .number(-2.5)], -3) == "/v must be at least -2.5.")
        #expect(try check(["maximum": .number(1e300)], .integer(.max)) == nil)
    }

    @Test func arrays() throws {
        #expect(try check(["items": ["type": "integer"]], [1, 2]) == nil)
        #expect(try check(["items": ["type": "integer"]], [1, "2"]) == "/v/1 must be an integer.")
        #expect(try check(["minItems": 1], []) == "/v must have at least 1 item.")
        #expect(try check(["maxItems": 1], [1, 2]) == "/v must have at most 1 item.")
        #expect(try check(["minItems": 1, "maxItems": 2], [1, 2]) == nil)
        #expect(try check(["uniqueItems": true], [1, 2, ["a": 1]]) == nil)
        #expect(try check(["uniqueItems": true], [1, 2, .number(1.0)]) == "/v/2 repeats an earlier item.")
        #expect(try check(["uniqueItems": true], [["a": 1], ["a": .number(1)]]) == "/v/1 repeats an earlier item.")
        #expect(try check(["uniqueItems": false], [1, 1]) == nil)
        #expect(try check(["items": false], []) == nil)
        #expect(try check(["items": false], [1]) == "/v/0 is not allowed here.")
    }

    @Test func objects() throws {
        let person: JSONValue = [
            "required": ["name"], "properties": ["name": ["type": "string"], "age": ["type": "integer"]],
            "additionalProperties": false,
        ]
        #expect(try check(person, ["name": "Ann", "age": 3]) == nil)
        #expect(try check(person, ["age": 3]) == "/v/name is required.")
        #expect(try check(person, ["name": 1]) == "/v/name must be a string.")
        #expect(try check(person, ["name": "Ann", "zip": 1, "city": 2]) == "/v/city is not allowed here.")
        let open: JSONValue = ["properties": ["a": ["type": "string"]]]
        #expect(try check(open, ["a": "x", "b": 1]) == nil)
        let typed: JSONValue = ["additionalProperties": ["type": "boolean"]]
        #expect(try check(typed, ["a": true]) == nil)
        #expect(try check(typed, ["a": 1]) == "/v/a must be a boolean.")
        #expect(try check(["minProperties": 1], [:]) == "/v must have at least 1 member.")
        #expect(try check(["maxProperties": 1], ["a": 1, "b": 2]) == "/v must have at most 1 member.")
        #expect(try check(["minProperties": 1, "maxProperties": 1], ["a": 1]) == nil)
        #expect(try check(["required": ["a"]], "not an object") == nil)
    }

    @Test func nestedPathsAndEscaping() throws {
        let nested = try schema([
            "properties": ["a/b~c": ["items": ["properties": ["d": ["type": "string"]]]]]
        ])
        #expect(nested.validate(["a/b~c": [["d": "x"], ["d": 2]]]) == "/a~1b~0c/1/d must be a string.")
        let closed = try schema(["additionalProperties": false])
        #expect(closed.validate(["é\"\\": 1]) == "/??? is not allowed here.")
        let long = String(repeating: "k", count: 100)
        #expect(closed.validate([long: 1]) == "/\(String(repeating: "k", count: 40)) is not allowed here.")
    }

    @Test func refusals() {
        #expect(
            refusal(["format": "email"])
                == "In the schema, format is not implemented by this server, so it cannot be enforced.")
        #expect(
            refusal(["properties": ["a": ["multipleOf": 2]]])?.hasPrefix("In the schema at /properties/a, multipleOf")
                == true)
        #expect(refusal(["items": ["$ref": "#"]])?.hasPrefix("In the schema at /items, $ref is not") == true)
        #expect(refusal(["pattern": "(["]) == "In the schema, pattern must be a valid regular expression.")
        #expect(refusal(["pattern": 3]) == "In the schema, pattern must be a valid regular expression.")
        #expect(refusal(["minLength": "3"]) == "In the schema, minLength must be a non-negative integer.")
        #expect(refusal(["maxItems": -1]) == "In the schema, maxItems must be a non-negative integer.")
        #expect(
            refusal(["minProperties": .number(1.5)]) == "In the schema, minProperties must be a non-negative integer.")
        #expect(refusal(["minLength": .number(2.0)]) == nil)
        #expect(refusal(["type": "float"])?.hasPrefix("In the schema, type must be") == true)
        #expect(refusal(["type": []])?.hasPrefix("In the schema, type must be") == true)
        #expect(refusal(["type": ["string", "string"]])?.hasPrefix("In the schema, type must be") == true)
        #expect(refusal(["required": ["a", "a"]]) == "In the schema, required must be an array of distinct strings.")
        #expect(refusal(["required": "a"]) == "In the schema, required must be an array of distinct strings.")
        #expect(refusal(["enum": []]) == "In the schema, enum must be a non-empty array.")
        #expect(refusal(["items": [["type": "string"]]])?.contains("items must be one schema") == true)
        #expect(refusal(["properties": [1]]) == "In the schema, properties must be an object of schemas.")
        #expect(refusal(["uniqueItems": "yes"]) == "In the schema, uniqueItems must be true or false.")
        #expect(refusal(["minimum": "1"]) == "In the schema, minimum must be a number.")
        #expect(refusal(["exclusiveMaximum": .number(.nan)]) == "In the schema, exclusiveMaximum must be a number.")
        #expect(refusal(5) == "In the schema, a schema must be an object, true or false.")
        #expect(
            refusal(["additionalProperties": "no"])
                == "In the schema at /additionalProperties, a schema must be an object, true or false.")
    }

    @Test func annotationsAreIgnored() throws {
        let annotated = try schema([
            "$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "urn:x", "title": "T",
            "description": "D", "$comment": "C", "examples": [1], "default": 1, "type": "integer",
        ])
        #expect(annotated.validate(1) == nil)
        #expect(annotated.validate("1") == " must be an integer.")
    }

    @Test func depthIsLimited() {
        var deep: JSONValue = ["type": "string"]
        for _ in 0..<16 { deep = ["items": deep] }
        #expect(refusal(deep) == nil)
        deep = ["items": deep]
        #expect(refusal(deep)?.hasSuffix("schemas nest deeper than 16 levels.") == true)
    }

    @Test func accountInformation() throws {
        let account = try schema([
            "type": "object", "required": ["type", "accounts"],
            "properties": [
                "type": ["const": "account_information"],
                "accounts": [
                    "type": "array", "minItems": 1, "maxItems": 10,
                    "items": [
                        "type": "object", "required": ["iban"],
                        "properties": ["iban": ["type": "string", "pattern": "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$"]],
                        "additionalProperties": false,
                    ],
                ],
                "actions": [
                    "type": "array", "items": ["enum": ["list_accounts", "read_balances", "read_transactions"]],
                ],
            ],
            "additionalProperties": false,
        ])
        let iban: JSONValue = ["iban": "DE89370400440532013000"]
        #expect(account.validate(["type": "account_information", "accounts": [iban]]) == nil)
        #expect(
            account.validate(["type": "account_information", "accounts": [iban], "actions": ["read_balances"]]) == nil)
        #expect(
            account.validate(["type": "payment_initiation", "accounts": [iban]]) == "/type must be account_information."
        )
        #expect(account.validate(["type": "account_information"]) == "/accounts is required.")
        #expect(
            account.validate(["type": "account_information", "accounts": []]) == "/accounts must have at least 1 item."
        )
        let eleven = JSONValue.array(Array(repeating: iban, count: 11))
        #expect(
            account.validate(["type": "account_information", "accounts": eleven])
                == "/accounts must have at most 10 items.")
        #expect(
            account.validate(["type": "account_information", "accounts": [iban, ["iban": "de89 3704"]]])
                == "/accounts/1/iban must match the pattern ^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$.")
        #expect(
            account.validate([
                "type": "account_information", "accounts": [["iban": "DE89370400440532013000", "bic": "X"]],
            ])
                == "/accounts/0/bic is not allowed here.")
        #expect(
            account.validate(["type": "account_information", "accounts": [[:]]]) == "/accounts/0/iban is required.")
        #expect(
            account.validate(["type": "account_information", "accounts": [iban], "actions": ["transfer"]])
                == "/actions/0 must be one of list_accounts, read_balances or read_transactions.")
        #expect(
            account.validate(["type": "account_information", "accounts": [iban], "locations": ["https://x"]])
                == "/locations is not allowed here.")
        #expect(account.validate("account_information") == " must be an object.")
    }
}
