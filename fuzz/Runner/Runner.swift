import Foundation
import FuzzHarnesses

// Built with `make fuzz` (FUZZING defined, libFuzzer's main): runs the
// harness named by TRIFACTOR_FUZZ_TARGET on each input libFuzzer makes.
// Built normally: `trifactor-fuzz NAME FILE...` replays inputs through a
// harness, to reproduce a crash under a debugger.

#if FUZZING
    nonisolated(unsafe) private var selected: FuzzHarness?

    @_cdecl("LLVMFuzzerTestOneInput")
    package func fuzzOne(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        if selected == nil {
            let name = ProcessInfo.processInfo.environment["TRIFACTOR_FUZZ_TARGET"] ?? ""
            guard let harness = FuzzHarness(rawValue: name) else {
                fatalError(
                    "TRIFACTOR_FUZZ_TARGET must name one of: \(FuzzHarness.allCases.map(\.rawValue).joined(separator: ", "))"
                )
            }
            selected = harness
        }
        selected?.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
        return 0
    }
#else
    @main
    struct Replay {
        static func main() {
            let arguments = CommandLine.arguments.dropFirst()
            guard let name = arguments.first, let harness = FuzzHarness(rawValue: name), arguments.count >= 2 else {
                let names = FuzzHarness.allCases.map(\.rawValue).joined(separator: ", ")
                FileHandle.standardError.write(Data("usage: trifactor-fuzz NAME FILE... (NAME: \(names))\n".utf8))
                exit(2)
            }
            for path in arguments.dropFirst() {
                guard let data = FileManager.default.contents(atPath: path) else {
                    FileHandle.standardError.write(Data("trifactor-fuzz: cannot read \(path)\n".utf8))
                    exit(2)
                }
                harness.run(Array(data))
                print("ok \(path)")
            }
        }
    }
#endif
