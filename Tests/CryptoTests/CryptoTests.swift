import Core
import Crypto
import Testing

@Suite("Crypto entry points")
struct CryptoTests {
    @Test("SHA-256 matches the FIPS 180-2 known answers")
    func sha256() {
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            SHA256.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test("Argon2id hashes carry their parameters and verify only the right password")
    func argon2id() throws {
        let hasher = try PasswordHasher(opsLimit: 2, memLimit: 19 * 1024 * 1024)
        let hash = try hasher.hash("correct horse battery")
        #expect(hash.hasPrefix("$argon2id$v=19$m=19456,t=2,p=1$"))
        #expect(hasher.verify("correct horse battery", hash: hash))
        #expect(!hasher.verify("correct horse batterY", hash: hash))
        #expect(!hasher.verify("correct horse battery", hash: "not a hash"))
        #expect(try hasher.hash("correct horse battery") != hash, "each hash has its own salt")
        #expect(!hasher.needsRehash(hash))
    }

    @Test("a hash made with weaker parameters still verifies and asks to be upgraded")
    func upgrade() throws {
        let weak = try PasswordHasher(opsLimit: 1, memLimit: 8 * 1024 * 1024)
        let strong = try PasswordHasher()
        let old = try weak.hash("hunter2 hunter2")
        #expect(strong.verify("hunter2 hunter2", hash: old))
        #expect(strong.needsRehash(old))
        #expect(!strong.verify("hunter2 hunter2", hash: strong.decoyHash()))
    }

    @Test("a known Argon2id hash from another implementation verifies")
    func knownAnswer() throws {
        // Made by the reference argon2 tool: echo -n password | argon2 somesaltsomesalt -id -t 2 -k 19456 -p 1 -e
        let hash = "$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$K13EBUiG7JV+9ZxztmHFTdb7J0WQsnj2V8bZaqyPptE"
        #expect(try PasswordHasher().verify("password", hash: hash))
        #expect(!(try PasswordHasher().verify("passwore", hash: hash)))
    }

    @Test("parameters outside libsodium's bounds are refused")
    func bounds() {
        #expect(throws: PasswordHasher.Failure.invalidParameters) { try PasswordHasher(opsLimit: 0) }
        #expect(throws: PasswordHasher.Failure.invalidParameters) { try PasswordHasher(memLimit: 1024) }
    }

    @Test("constant-time comparison compares bytes and lengths")
    func constantTime() {
        #expect(ConstantTime.equals("abc", "abc"))
        #expect(!ConstantTime.equals("abc", "abd"))
        #expect(!ConstantTime.equals("abc", "abcd"))
        #expect(ConstantTime.equals([], []))
        #expect(SecureRandom.bytes(32) != SecureRandom.bytes(32))
    }
}

@Suite("Hex and secret bytes")
struct HexAndSecureBytesTests {
    @Test("hex round-trips through libsodium and refuses what is not hex of whole bytes")
    func hex() {
        #expect(Hex.encode([0x00, 0xab, 0xff]) == "00abff")
        #expect(Hex.decode("00abff") == [0x00, 0xab, 0xff])
        #expect(Hex.decode("00ABFF") == [0x00, 0xab, 0xff])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
        #expect(Hex.decode("") == [])
    }

    @Test("secret bytes compare by content and never print it")
    func secureBytes() {
        let a = SecureBytes([1, 2, 3])
        let b = SecureBytes([1, 2, 3])
        let c = SecureBytes([1, 2, 4])
        let d = SecureBytes([1, 2])
        #expect(a == b)
        #expect(a != c)
        #expect(a != d)
        #expect(String(describing: a) == "SecureBytes(3 bytes)")
        #expect(a.withUnsafeBytes { Array($0) } == [1, 2, 3])
    }

    @Test("the live random source draws every value below the bound, and none at or above it")
    func uniform() {
        var seen = Set<UInt32>()
        for _ in 0..<2_000 {
            let value = SecureRandom.source.uniform(10)
            #expect(value < 10)
            seen.insert(value)
        }
        #expect(seen.count == 10)
        #expect(SecureRandom.source.uniform(1) == 0)
    }
}
