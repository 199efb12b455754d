import API
import Crypto
import Foundation
import HTTP
import Logging
import Store
import TrifactorBank
import TrifactorKit
import TrifactorKitVault

// trifactor-bank: the demo bank, a relying party of trifactord. Settings come
// from the environment; errors are one sentence and exit 1.
let environment = ProcessInfo.processInfo.environment
func setting(_ name: String, _ fallback: String) -> String {
    environment[name].flatMap { $0.isEmpty ? nil : $0 } ?? fallback
}

func fail(_ sentence: String) -> Never {
    FileHandle.standardError.write(Data("trifactor-bank: \(sentence)\n".utf8))
    exit(1)
}

// Its settings come from the environment alone; --help lists them.
switch Array(CommandLine.arguments.dropFirst()) {
case []: break
case ["--help"], ["-h"], ["help"]:
    print(
        """
        Usage: trifactor-bank

        Trifactor Bank, the demo bank: a web app that signs its customers in with trifactord and confirms each
        transfer with a fresh second factor. Runs until SIGTERM or SIGINT. Settings (environment):
          TRIFACTOR_BANK_TRIFACTOR_URL  trifactord's address (default http://127.0.0.1:8080)
          TRIFACTOR_BANK_LISTEN         address to listen on (default 127.0.0.1:8090)
          TRIFACTOR_BANK_DATABASE_URL   sqlite:PATH or postgres://… (default sqlite:data/bank.db)
          TRIFACTOR_BANK_SECRET_FILE    its CSRF secret, made 0600 on first start (default data/bank.secret)
          TRIFACTOR_BANK_DEV            1: link the dev phone (default 0)
          TRIFACTOR_BANK_IDLE_TIMEOUT   seconds before balances hide (2 to 86400, default 300)
          TRIFACTOR_BANK_BRAND          the name on customers' texts and emails (default Trifactor Bank)
        The standard path (customers sign in and approve transfers on Trifactor's hosted pages, the bank a FAPI 2.0
        client of trifactord's OpenID Provider) is on when TRIFACTOR_BANK_CLIENT_ID is set:
          TRIFACTOR_BANK_CLIENT_ID      the bank's client_id, registered with --fapi2 --auth-method private_key_jwt
          TRIFACTOR_BANK_ISSUER         trifactord's issuer (default TRIFACTOR_BANK_TRIFACTOR_URL)
          TRIFACTOR_BANK_CLIENT_KEY     its assertion key, made 0600 on first use (default data/bank-client.key)
          TRIFACTOR_BANK_DPOP_KEY       the key its tokens are bound to (default data/bank-dpop.key)
          TRIFACTOR_BANK_REDIRECT_URIS  its registered callbacks, space-separated
                                        (default http://localhost:PORT/signin/callback http://127.0.0.1:PORT/…)

        Usage: trifactor-bank staff add EMAIL | remove EMAIL | list
        Who may use "bank by phone" (/staff/phone, the standard path): staff sign in through Trifactor with this email
        (they need an account at the bank, as any customer).

        Usage: trifactor-bank jwks
        Prints the public JWK Set of TRIFACTOR_BANK_CLIENT_KEY (made when missing), for
        `trifactord clients create --jwks-file`.
        """)
    exit(0)
case let arguments where arguments.first == "staff":
    let database: any Database
    do {
        database = try openDatabase(url: setting("TRIFACTOR_BANK_DATABASE_URL", "sqlite:data/bank.db"), poolSize: 1)
        try database.migrate(BankSchema.migrations)
    } catch {
        fail("cannot open the bank's database: \(error)")
    }
    defer { database.close() }
    switch Array(arguments.dropFirst()) {
    case ["list"]:
        let emails = (try? database.read { try $0.query("SELECT email FROM bank_staff ORDER BY email", []) }) ?? []
        for row in emails { print((try? row.text("email")) ?? "") }
        if emails.isEmpty { print("No staff yet: trifactor-bank staff add EMAIL adds one.") }
    case let words where words.count == 2 && ["add", "remove"].contains(words[0]):
        let email = words[1].lowercased()
        guard BankApp.looksLikeEmail(email) else {
            fail("\(words[1]) is not an email address.")
        }
        do {
            try database.transaction { db in
                if words[0] == "add" {
                    try db.execute(
                        "INSERT INTO bank_staff (email, added_at) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                        [.text(email), .int(Int64(Date().timeIntervalSince1970 * 1000))])
                } else {
                    try db.execute("DELETE FROM bank_staff WHERE email = $1", [.text(email)])
                }
            }
        } catch {
            fail("cannot change the staff list: \(error)")
        }
        print(words[0] == "add" ? "\(email) may use bank by phone." : "\(email) may no longer use bank by phone.")
    default:
        fail("staff takes add EMAIL, remove EMAIL or list (see trifactor-bank --help).")
    }
    exit(0)
case ["jwks"]:
    do {
        let key = try SoftwareClientKey(file: setting("TRIFACTOR_BANK_CLIENT_KEY", "data/bank-client.key"))
        print(key.publicJWKSet)
        exit(0)
    } catch {
        fail(error.description)
    }
case ["--version"]:
    print("trifactor-bank \(TrifactorVersion.current)")
    exit(0)
default:
    fail("it takes no arguments: its settings come from the environment (see trifactor-bank --help).")
}

/// The bank's secret (it signs the CSRF tokens of visitors without a session): 32 random bytes in a 0600 file, made on first start.
func secret(at path: String) -> [UInt8] {
    if let data = FileManager.default.contents(atPath: path) {
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & 0o077 == 0 else {
            fail("\(path) can be read by other users; run `chmod 600 \(path)`.")
        }
        guard data.count == 32 else { fail("\(path) must hold 32 bytes; delete it to make a new one.") }
        return Array(data)
    }
    let bytes = SecureRandom.bytes(32)
    try? FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600])
    else { fail("cannot write \(path).") }
    return bytes
}

guard let trifactor = URL(string: setting("TRIFACTOR_BANK_TRIFACTOR_URL", "http://127.0.0.1:8080")),
    trifactor.host != nil
else {
    fail("TRIFACTOR_BANK_TRIFACTOR_URL must be trifactord's URL, like http://127.0.0.1:8080.")
}
let listen = setting("TRIFACTOR_BANK_LISTEN", "127.0.0.1:8090")
guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]),
    (0...65535).contains(port)
else {
    fail("TRIFACTOR_BANK_LISTEN must be HOST:PORT, like 127.0.0.1:8090.")
}
var configuration = BankApp.Configuration(
    trifactor: trifactor, secret: secret(at: setting("TRIFACTOR_BANK_SECRET_FILE", "data/bank.secret")))
configuration.databaseURL = setting("TRIFACTOR_BANK_DATABASE_URL", "sqlite:data/bank.db")
configuration.host = String(listen[..<colon])
configuration.port = port
if let clientID = environment["TRIFACTOR_BANK_CLIENT_ID"], !clientID.isEmpty {
    guard let issuer = URL(string: setting("TRIFACTOR_BANK_ISSUER", trifactor.absoluteString)), issuer.host != nil
    else {
        fail("TRIFACTOR_BANK_ISSUER must be trifactord's issuer, like http://127.0.0.1:8080.")
    }
    let shownPort = port == 0 ? 8090 : port
    let uris = setting(
        "TRIFACTOR_BANK_REDIRECT_URIS",
        "http://localhost:\(shownPort)/signin/callback http://127.0.0.1:\(shownPort)/signin/callback"
    ).split(separator: " ").map { URL(string: String($0)) }
    guard !uris.isEmpty, uris.allSatisfy({ $0?.host != nil && $0?.path == "/signin/callback" }) else {
        fail("TRIFACTOR_BANK_REDIRECT_URIS lists the bank's callbacks, like http://localhost:8090/signin/callback.")
    }
    do {
        let credentials = SignInWithTrifactor.ClientCredentials(
            assertionKey: try SoftwareClientKey(file: setting("TRIFACTOR_BANK_CLIENT_KEY", "data/bank-client.key")),
            dpopKey: try SoftwareClientKey(file: setting("TRIFACTOR_BANK_DPOP_KEY", "data/bank-dpop.key")))
        configuration.standard = BankApp.StandardClient(
            clientID: clientID, issuer: issuer, credentials: credentials, redirectURIs: uris.compactMap { $0 })
    } catch {
        fail(error.description)
    }
}
if setting("TRIFACTOR_BANK_DEV", "0") == "1" { configuration.devPhone = trifactor.appendingPathComponent("dev/phone") }
if let raw = environment["TRIFACTOR_BANK_IDLE_TIMEOUT"], !raw.isEmpty {
    guard let idle = TimeInterval(raw), idle >= 2, idle <= 86_400 else {
        fail("TRIFACTOR_BANK_IDLE_TIMEOUT is seconds, 2 to 86400.")
    }
    configuration.idleTimeout = idle
}
if let brand = environment["TRIFACTOR_BANK_BRAND"] {
    // trifactord takes 1 to 18 letters, digits, spaces and &'.-; empty: Trifactor's own name.
    let allowed = brand.unicodeScalars.allSatisfy {
        CharacterSet.alphanumerics.contains($0) || " &'.-".unicodeScalars.contains($0)
    }
    guard brand.isEmpty || (brand.count <= 18 && allowed) else {
        fail(
            "TRIFACTOR_BANK_BRAND is the name on customers' texts and emails: 1 to 18 letters, digits, spaces and &'.- (empty: Trifactor's)."
        )
    }
    configuration.brand = brand.isEmpty ? nil : brand
}

var signals = sigset_t()
sigemptyset(&signals)
sigaddset(&signals, SIGTERM)
sigaddset(&signals, SIGINT)
pthread_sigmask(SIG_BLOCK, &signals, nil)

let database: any Database
do { database = try openDatabase(url: configuration.databaseURL, poolSize: 8) } catch {
    fail("cannot open \(configuration.databaseURL): \(error)")
}
let server: HTTPServer
do { server = try BankApp(configuration: configuration, database: database).start() } catch {
    fail("cannot start: \(error)")
}
let logger = Logger.standardError
logger.log(
    .info, "bank_listening",
    ["url": .string("http://\(configuration.host):\(server.port)/"), "trifactor": .string(trifactor.absoluteString)])
// A loopback or wildcard address is printed as localhost: passkeys (WebAuthn) need a domain, not an IP address.
let shown = ["0.0.0.0", "127.0.0.1", "::", "::1"].contains(configuration.host) ? "localhost" : configuration.host
print("Trifactor Bank: http://\(shown):\(server.port)/")
fflush(nil)
var received: Int32 = 0
sigwait(&signals, &received)
server.stop(drainTimeout: 5)
database.close()
Logger.flushStandardError()
