/// A user agent as people read it: "Chrome on Linux", "Safari on iPhone",
/// "Firefox on Windows", "trifactor command line on Linux". One small table
/// of the common browsers and systems, in the order that tells them apart
/// (Edge and Opera say Chrome too, Chrome says Safari too, every Android
/// says Linux too); anything else reads "Unknown browser". No articles and
/// no capitals added, so a name reads the same in a list and in a sentence.
package enum DeviceName {
    /// Browsers and programs, most specific first: (marker in the user agent, name).
    static let programs: [(String, String)] = [
        ("trifactor CLI", "trifactor command line"), ("TrifactorKit", "Trifactor app"),
        ("Edg/", "Edge"), ("EdgA/", "Edge"), ("EdgiOS/", "Edge"), ("OPR/", "Opera"),
        ("SamsungBrowser/", "Samsung Internet"),
        ("Firefox/", "Firefox"), ("FxiOS/", "Firefox"), ("CriOS/", "Chrome"), ("Chromium/", "Chromium"),
        ("HeadlessChrome/", "Chrome"),
        ("Chrome/", "Chrome"), ("Safari/", "Safari"), ("curl/", "curl"), ("python-requests/", "Python script"),
        ("okhttp/", "Android app"),
    ]

    /// Systems, most specific first.
    static let systems: [(String, String)] = [
        ("iPhone", "iPhone"), ("iPad", "iPad"), ("Android", "Android"), ("CrOS", "ChromeOS"), ("Windows", "Windows"),
        ("Macintosh", "macOS"), ("Mac OS X", "macOS"), ("Linux", "Linux"),
    ]

    /// "Chrome on Linux"; "Chrome" when the system is unknown; "Unknown browser" for nothing known.
    package static func describe(userAgent: String?) -> String {
        guard let agent = userAgent, !agent.isEmpty else { return "Unknown browser" }
        let program = programs.first { agent.contains($0.0) }?.1
        let system = systems.first { agent.contains($0.0) }?.1
        switch (program, system) {
        case (let program?, let system?): return "\(program) on \(system)"
        case (let program?, nil): return program
        case (nil, let system?): return "Browser on \(system)"
        case (nil, nil): return "Unknown browser"
        }
    }
}
