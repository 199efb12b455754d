import Core
import Testing

@testable import TrifactorServer

/// The device grant's user code (RFC 8628 §6.1): letters no one confuses, read back however it is typed.
@Suite("A device's user code is easy to read and to type")
struct UserCodeTests {
    @Test("a new code is eight letters of the twenty consonants, shown as XXXX-XXXX")
    func made() {
        let random = RandomSource(bytes: { count in (0..<count).map { _ in UInt8.random(in: 0...255) } })
        for _ in 0..<200 {
            let code = UserCode.make(random)
            #expect(code.count == 8 && code.allSatisfy(UserCode.alphabet.contains), "\(code)")
            let shown = UserCode.display(code)
            #expect(shown.count == 9 && shown.dropFirst(4).first == "-")
            #expect(UserCode.normalize(shown) == code)
        }
        #expect(!UserCode.alphabet.contains { "AEIOUY01".contains($0) }, "no vowel, no look-alike of a digit")
        #expect(Set(UserCode.alphabet).count == 20)
    }

    @Test("case, dashes and spaces do not matter; anything else is not a code")
    func normalized() {
        #expect(UserCode.normalize("bcdf-ghjk") == "BCDFGHJK")
        #expect(UserCode.normalize(" bcdf ghjk ") == "BCDFGHJK")
        #expect(UserCode.normalize("BC-DF GH-JK") == "BCDFGHJK")
        #expect(UserCode.normalize("BCDF-GHJ") == nil, "too short")
        #expect(UserCode.normalize("BCDF-GHJKL") == nil, "too long")
        #expect(UserCode.normalize("BCDF-GHJ0") == nil, "a digit")
        #expect(UserCode.normalize("ABCD-GHJK") == nil, "a vowel")
        #expect(UserCode.normalize("BCDF_GHJK") == nil, "another separator")
        #expect(UserCode.normalize(String(repeating: " ", count: 100) + "BCDFGHJK") == nil, "too long to read")
    }

    @Test("only the code's hash is kept, the same for every way of typing it")
    func hashed() {
        let stored = UserCode.hash("BCDFGHJK")
        #expect(stored.count == 64 && !stored.contains("BCDF"))
        #expect(UserCode.normalize("bcdf-ghjk").map(UserCode.hash) == stored)
    }
}
