import Core
import Testing

@testable import TrifactorServer

@Suite("cracklib's dictionary")
struct PasswordDictionaryTests {
    @Test(
        "qwerty123, Passw0rd, words with a digit or a symbol or two around them and reversed words are refused; passphrases and random strings are not"
    )
    func refusals() throws {
        let dictionary = try PasswordDictionary.open()
        // What cracklib-check itself says of each (its composition rules aside).
        for common in [
            "qwerty123", "Passw0rd", "dragon1", "Sunshine!", "football12", "monkey!!", "321ytrewq", "LetMeIn",
            "trustno1",
        ] {
            #expect(dictionary.contains(common), "\(common)")
        }
        for fine in ["correct horse battery staple", "vX7#qL2!pR9z", "sunflower tractor evening"] {
            #expect(!dictionary.contains(fine), "\(fine)")
        }
        #expect(try PasswordDictionary.open() === dictionary, "one dictionary per process")
    }
}
