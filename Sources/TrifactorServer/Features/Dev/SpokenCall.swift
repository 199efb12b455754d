import Foundation
import Messaging

/// The dev phone's voice calls as sound: the call's text spoken by
/// espeak-ng (Debian's `espeak-ng`) in the message's language, as a WAV.
/// The text goes in on standard input, never as an argument or through a
/// shell; bidirectional isolates are taken out (they are not spoken).
enum SpokenCall {
    /// espeak-ng's voice for each catalog language where the names differ.
    static let voices = ["en": "en-us", "fr": "fr-fr", "zh": "cmn"]
    static let program = "/usr/bin/espeak-ng"

    /// Why a call cannot be rendered.
    enum Failure: Error { case notInstalled, failed(String) }

    /// The WAV of `text` spoken in the language of `locale`.
    static func wav(_ text: String, locale: String) throws(Failure) -> [UInt8] {
        guard FileManager.default.isExecutableFile(atPath: program) else { throw .notInstalled }
        let language = MessageCatalog.bundled.code(for: locale)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["-v", voices[language] ?? language, "-s", "140", "--stdout"]
        let input = Pipe()
        let output = Pipe()
        let errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        do { try process.run() } catch { throw .failed("cannot start espeak-ng: \(error)") }
        let spoken = text.unicodeScalars.filter {
            !(0x2066...0x2069).contains($0.value) && !(0x200E...0x200F).contains($0.value)
        }
        input.fileHandleForWriting.write(Data(String(String.UnicodeScalarView(spoken)).utf8))
        try? input.fileHandleForWriting.close()
        let wav = output.fileHandleForReading.readDataToEndOfFile()
        _ = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, wav.count > 44, wav.prefix(4) == Data("RIFF".utf8) else {
            throw .failed("espeak-ng exited \(process.terminationStatus)")
        }
        return Array(wav)
    }
}
