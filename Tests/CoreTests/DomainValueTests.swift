import Core
import Testing

@Suite("Typed ids and purposes")
struct DomainValueTests {
    @Test("a new id is a lower-case version 4 UUID made of the random source's bytes")
    func randomID() {
        let random = RandomSource(bytes: { [UInt8](repeating: 0xff, count: $0) })
        let id = UserID.random(using: random)
        #expect(id.raw == "ffffffff-ffff-4fff-bfff-ffffffffffff")
        #expect(id.description == id.raw)
        let zero = SessionID.random(using: RandomSource(bytes: { [UInt8](repeating: 0, count: $0) }))
        #expect(zero.raw == "00000000-0000-4000-8000-000000000000")
    }

    @Test("every purpose reads back from its stored form, and the label is what devices sign")
    func purposeRoundTrip() {
        let purposes: [Purpose] = [
            .signIn(pendingHash: "ab12"), .stepUp(SessionID("s-1")),
            .authorization(AuthorizationID("a-1"), actionHash: "cd34"), .passwordReset(resetHash: "ef56"),
        ]
        #expect(purposes.map(\.key) == ["signin:ab12", "stepup:s-1", "authz:a-1:cd34", "reset:ef56"])
        #expect(purposes.map(\.label) == ["signin", "stepup", "authz", "reset"])
        #expect(purposes.map { Purpose(key: $0.key) } == purposes)
        #expect(purposes.map(\.actionHash) == [nil, nil, "cd34", nil])
    }

    @Test("a stored purpose the program does not know is no purpose at all")
    func unknownPurpose() {
        for key in ["", "signin", "signin:a:b", "authz:a-1", "login:x", "SIGNIN:ab"] {
            #expect(Purpose(key: key) == nil, "\(key)")
        }
    }
}
