import Foundation
import JOSE
import Testing

@Suite("Reading JOSE's JSON")
struct JSONReaderTests {
    static func read(_ text: String) -> [String: JSONValue]? { try? JSONValue.parseObject(Array(text.utf8)) }

    /// What Foundation's decoder reads (and the reader before this one returned), compared by what JOSE asks of
    /// a value: its serialized form, which writes a whole `number` as an integer.
    static func decoded(_ text: String) -> [UInt8]? {
        (try? JSONDecoder().decode([String: JSONValue].self, from: Data(text.utf8))).map(JSONValue.serialize)
    }

    @Test("objects, arrays, escapes, surrogate pairs, numbers and non-ASCII text read as JSONDecoder read them")
    func sameAsTheDecoder() throws {
        let texts = [
            #"{}"#, #" { "a" : 1 , "b" : [ ] , "c" : { } } "#, "{\n\t\"a\":\r\n true}",
            #"{"typ":"dpop+jwt","alg":"ES256","jwk":{"kty":"EC","crv":"P-256","x":"l8tF","y":"9VE"}}"#,
            #"{"s":"a\"b\\c\/d\b\f\n\r\t","u":"\u00e9\u20ac\ud83d\ude00","raw":"é€😀","empty":""}"#,
            #"{"i":0,"n":-0,"big":9223372036854775807,"bigger":9223372036854775808,"neg":-9223372036854775808}"#,
            #"{"f":1.5,"e":1e3,"E":-2.5E-3,"z":0.0,"w":1.0,"x":[1,2.5,"3",null,true,false,[[]]]}"#,
            #"{"nul":"\u0000"}"#,
        ]
        for text in texts {
            let read = try #require(Self.read(text), "\(text)")
            #expect(JSONValue.serialize(read) == Self.decoded(text), "\(text)")
        }
        #expect(
            Self.read(#"{"iat":1700000000,"f":1.5,"s":"x"}"#) == [
                "iat": .integer(1_700_000_000), "f": .number(1.5), "s": "x",
            ])
    }

    @Test("anything but one JSON object, by the grammar, is refused")
    func refused() {
        let texts = [
            "", " ", "[]", "1", #""a""#, "null", "{", "}", #"{"a":1"#, #"{"a":1,}"#, #"{"a" 1}"#, #"{a:1}"#,
            #"{'a':1}"#, #"{"a":[1,]}"#, #"{"a":01}"#, #"{"a":1.}"#, #"{"a":.5}"#, #"{"a":+1}"#, #"{"a":1e}"#,
            #"{"a":-}"#, #"{"a":tru}"#, #"{"a":NaN}"#, #"{"a":Infinity}"#, #"{"a":1e400}"#, #"{"a":1}x"#,
            #"{"a":1}{}"#, "{\"a\":\"\t\"}", "{\"a\":\"\n\"}", #"{"a":"\x"}"#, #"{"a":"\u12"}"#,
            #"{"a":"\ud800"}"#, #"{"a":"\udc00"}"#, #"{"a":"\ud800\u0041"}"#, #"{"a":"unterminated}"#,
        ]
        for text in texts { #expect(Self.read(text) == nil, "\(text)") }
        // Bytes that are not UTF-8, in a string and outside one.
        #expect((try? JSONValue.parseObject(Array(#"{"a":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8))) == nil)
        #expect((try? JSONValue.parseObject(Array(#"{"a":1"#.utf8) + [0xA0] + Array("}".utf8))) == nil)
    }

    @Test("an object that names a member twice is refused, escaped or not, at any depth")
    func duplicates() {
        #expect(Self.read(#"{"alg":"ES256","alg":"none"}"#) == nil)
        #expect(Self.read(#"{"alg":"ES256","\u0061lg":"none"}"#) == nil)
        #expect(Self.read(#"{"jwk":{"x":"a","x":"b"}}"#) == nil)
        #expect(Self.read(#"{"a":[{"b":1,"b":1}]}"#) == nil)
        #expect(Self.read(#"{"a":{"b":1},"c":{"b":1}}"#) != nil)
    }

    @Test("512 levels of nesting are read, 513 refused")
    func depth() {
        func nested(_ levels: Int) -> String {
            #"{"a":"# + String(repeating: "[", count: levels - 1) + String(repeating: "]", count: levels - 1) + "}"
        }
        #expect(Self.read(nested(512)) != nil)
        #expect(Self.read(nested(513)) == nil)
    }

    @Test("a JWK cache gives the same key for the same members, keeps no refused key, and stays bounded")
    func cache() throws {
        let cache = JWKCache(capacity: 2)
        let first = try SigningKey.generate(.es256).publicJWK.members
        #expect(try cache.key(first) == JWK(members: first))
        #expect(try cache.key(first) == cache.key(first))
        #expect(cache.count == 1)
        var bad = first
        bad["d"] = "AAAA"
        #expect(throws: JOSEError.invalidKey) { try cache.key(bad) }
        #expect(cache.count == 1)
        for _ in 0..<5 { _ = try cache.key(SigningKey.generate(.es256).publicJWK.members) }
        #expect(cache.count <= 2)
    }
}
