// swift-tools-version:6.0
import PackageDescription

/// Settings every Swift target of ours shares: Swift 6 language mode (complete
/// concurrency checking), explicit `any` for existentials, and imports that say
/// what a module uses: an `import` is internal unless it says `public` or
/// `package` (SE-0409), and a member is visible only where its own module is
/// imported (SE-0444), so an undeclared dependency fails the build.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "Trifactor",
    // Linux ignores these. On Apple platforms TrifactorKit needs Swift concurrency
    // and AuthenticationServices passkeys (iOS 16); the server's Synchronization.Mutex needs macOS 15.
    platforms: [.macOS(.v15), .iOS(.v16), .visionOS(.v1)],
    products: [
        .executable(name: "trifactord", targets: ["trifactord"]),
        /// The wire models of Trifactor's HTTP API, shared by the server and its clients.
        .library(name: "API", targets: ["API"]),
        /// The Swift SDK: sign-in with second factors, factors, step-up, bound actions, phone verification, the device authenticator.
        .library(name: "TrifactorKit", targets: ["TrifactorKit"]),
        /// Linux defaults for TrifactorKit: the sealed vault, a software device key, the passphrase as presence check.
        .library(name: "TrifactorKitVault", targets: ["TrifactorKitVault"]),
        /// Fakes of TrifactorKit's seams for an app's tests: clock, presence, passkeys.
        .library(name: "TrifactorKitTesting", targets: ["TrifactorKitTesting"]),
        .executable(name: "trifactor", targets: ["trifactor"]),
        /// Trifactor Bank, the demo relying party (`make run` starts it with trifactord).
        .executable(name: "trifactor-bank", targets: ["trifactor-bank"]),
    ],
    targets: [
        // C libraries from Debian, as system library targets.
        .systemLibrary(name: "CMicroHTTPD", pkgConfig: "libmicrohttpd", providers: [.apt(["libmicrohttpd-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        .systemLibrary(name: "CCBOR", pkgConfig: "libcbor", providers: [.apt(["libcbor-dev"])]),
        .systemLibrary(name: "CPostgres", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        // cracklib ships no pkg-config file: the module map links -lcrack.
        .systemLibrary(name: "CCrack", providers: [.apt(["libcrack2-dev", "cracklib-runtime"])]),
        // curl_easy_setopt is variadic: typed entry points for it, nothing more.
        .target(name: "CCurlShim", dependencies: ["CCurl"]),
        // One small C target per library, holding only what Swift cannot call:
        // MHD_start_daemon is variadic; SQLITE_TRANSIENT is a cast macro; OSSL_PARAM
        // arrays must outlive bridged strings; a _Thread_local flag and gettid.
        .target(name: "CMicroHTTPDShim", dependencies: ["CMicroHTTPD"]),
        .target(name: "CSQLiteShim", dependencies: ["CSQLite"]),
        .target(name: "COpenSSLShim", dependencies: ["COpenSSL"]),
        .target(name: "CThreadShim"),
        // libphonenumber is C++: a C header over a small C++ file of ours.
        .target(name: "CPhoneNumber", linkerSettings: [.linkedLibrary("phonenumber"), .linkedLibrary("stdc++")]),

        // Floors, bottom up. A module imports only those below it.
        .target(name: "API", swiftSettings: strict),
        .target(name: "Logging", swiftSettings: strict),
        .target(name: "Core", swiftSettings: strict),
        // Argument parsing for both executables: options, flags, words, usage errors.
        .target(name: "CommandLineKit", swiftSettings: strict),
        // QR codes encoded once by libqrencode, drawn as SVG (the server) or half blocks (the terminal).
        .target(name: "QRCode", dependencies: ["CQREncode"], swiftSettings: strict),
        .target(name: "Crypto", dependencies: ["Core", "CSodium", "COpenSSL", "COpenSSLShim"], swiftSettings: strict),
        .target(name: "Phone", dependencies: ["CPhoneNumber"], swiftSettings: strict),
        .target(name: "WebUI", swiftSettings: strict),
        .target(name: "WebAuthn", dependencies: ["Core", "Crypto", "CCBOR", "COpenSSL"], swiftSettings: strict),
        // JOSE for the OpenID Provider: signing keys, JWKs, compact JWS, JWT claims.
        .target(name: "JOSE", dependencies: ["Core", "Crypto"], swiftSettings: strict),
        .target(
            name: "Messaging", dependencies: ["Core", "Crypto", "CCurl", "CCurlShim"], resources: [.copy("Templates")],
            swiftSettings: strict),
        .target(name: "Metrics", swiftSettings: strict),
        .target(
            name: "Store", dependencies: ["CSQLite", "CSQLiteShim", "CPostgres", "Metrics"], swiftSettings: strict),
        .target(
            name: "HTTP", dependencies: ["API", "Logging", "Metrics", "CMicroHTTPD", "CMicroHTTPDShim", "CThreadShim"],
            swiftSettings: strict),
        // The anti-phishing sitekey shared by trifactord and the bank: its check, its pictures (served by both),
        // and the browsers recognised for an account, on which a password page may show it.
        .target(
            name: "Sitekeys", dependencies: ["Crypto", "Store", "HTTP"], resources: [.copy("Resources/sitekeys")],
            swiftSettings: strict),
        .target(
            name: "TrifactorServer",
            dependencies: [
                "API", "Core", "Crypto", "Logging", "Metrics", "Store", "HTTP", "Phone", "Messaging", "QRCode",
                "WebAuthn", "CCrack", "CommandLineKit", "WebUI", "JOSE", "Sitekeys",
            ],
            resources: [
                .copy("Resources/common-passwords.txt"), .copy("Resources/passkey.js"), .copy("Resources/openapi.json"),
                .copy("Resources/pages"),
            ],
            swiftSettings: strict
        ),
        .executableTarget(name: "trifactord", dependencies: ["TrifactorServer"], swiftSettings: strict),

        // The client side: a portable SDK core (Foundation only), its Linux
        // defaults (libsodium and OpenSSL through Crypto), fakes for tests, and the CLI.
        .target(name: "TrifactorKit", dependencies: ["API"], swiftSettings: strict),
        .target(name: "TrifactorKitVault", dependencies: ["TrifactorKit", "Core", "Crypto"], swiftSettings: strict),
        .target(name: "TrifactorKitTesting", dependencies: ["TrifactorKit"], swiftSettings: strict),
        .executableTarget(
            name: "trifactor",
            dependencies: ["Core", "TrifactorKit", "TrifactorKitVault", "Crypto", "QRCode", "CommandLineKit"],
            swiftSettings: strict),

        // Trifactor Bank: the demo relying party, its own server and database, on TrifactorKit.
        .target(
            name: "TrifactorBank",
            dependencies: [
                "API", "TrifactorKit", "TrifactorKitVault", "Core", "Crypto", "Store", "HTTP", "Logging", "Phone",
                "WebUI", "Sitekeys",
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "trifactor-bank",
            dependencies: [
                "TrifactorBank", "TrifactorKit", "TrifactorKitVault", "API", "Crypto", "Store", "Logging", "HTTP",
            ],
            swiftSettings: strict),

        // Fuzzing (`make fuzz`): one harness per parser of attacker bytes, and a
        // runner that is libFuzzer's target when built with -DFUZZING and a
        // replayer otherwise. The test suite replays fuzz/corpus through the harnesses.
        .target(
            name: "FuzzHarnesses", dependencies: ["API", "Crypto", "HTTP", "JOSE", "WebAuthn"], path: "fuzz/Harnesses",
            swiftSettings: strict),
        .executableTarget(
            name: "trifactor-fuzz", dependencies: ["FuzzHarnesses"], path: "fuzz/Runner", swiftSettings: strict),

        // Helpers shared by the test targets: backends (SQLite file, PostgreSQL schema), threads;
        // the real server on a loopback port with its clients and fakes (server and SDK integration tests);
        // the message catalog's languages and provider accounts (messaging and server tests).
        .target(name: "TrifactorTestSupport", dependencies: ["Store"], path: "Tests/Support", swiftSettings: strict),
        .target(
            name: "ServerTestSupport",
            dependencies: [
                "API", "Core", "Crypto", "Logging", "HTTP", "Store", "Messaging", "TrifactorServer",
                "TrifactorTestSupport",
            ],
            path: "Tests/ServerSupport", swiftSettings: strict),
        .target(
            name: "MessagingTestSupport", dependencies: ["Messaging"], path: "Tests/MessagingSupport",
            swiftSettings: strict),
        .testTarget(name: "CoreTests", dependencies: ["Core"], swiftSettings: strict),
        .testTarget(name: "CommandLineKitTests", dependencies: ["CommandLineKit"], swiftSettings: strict),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode"], swiftSettings: strict),
        .testTarget(name: "CryptoTests", dependencies: ["Core", "Crypto"], swiftSettings: strict),
        .testTarget(name: "PhoneTests", dependencies: ["Phone"], swiftSettings: strict),
        .testTarget(name: "JOSETests", dependencies: ["JOSE", "Crypto", "Core"], swiftSettings: strict),
        .testTarget(name: "WebAuthnTests", dependencies: ["WebAuthn"], swiftSettings: strict),
        .testTarget(name: "FuzzCorpusTests", dependencies: ["FuzzHarnesses"], swiftSettings: strict),
        .testTarget(name: "StoreTests", dependencies: ["Store", "TrifactorTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "BankTests",
            dependencies: [
                "API", "HTTP", "Logging", "TrifactorKit", "TrifactorBank", "Store", "TrifactorTestSupport", "WebUI",
                "Sitekeys",
            ],
            swiftSettings: strict),
        .testTarget(
            name: "TrifactorKitTests",
            dependencies: ["API", "TrifactorKit", "TrifactorKitVault", "TrifactorKitTesting", "Crypto"],
            swiftSettings: strict),
        .testTarget(name: "HTTPTests", dependencies: ["API", "HTTP", "Logging"], swiftSettings: strict),
        .testTarget(
            name: "MessagingTests", dependencies: ["Messaging", "MessagingTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "ServerTests",
            dependencies: [
                "TrifactorServer", "trifactord", "Phone", "TrifactorKit", "trifactor", "API", "HTTP", "Logging",
                "Messaging", "Store", "Core", "Crypto", "WebAuthn", "JOSE", "TrifactorTestSupport", "ServerTestSupport",
                "MessagingTestSupport", "Sitekeys", "WebUI",
            ], swiftSettings: strict),
        // TrifactorKit against trifactord over loopback.
        .testTarget(
            name: "SDKIntegrationTests",
            dependencies: [
                "TrifactorServer", "TrifactorKit", "TrifactorKitVault", "TrifactorKitTesting", "HTTP", "Core", "Crypto",
                "TrifactorTestSupport", "ServerTestSupport",
            ], swiftSettings: strict),
        .testTarget(name: "DocsTests", swiftSettings: strict),
    ]
)
