import Foundation
import TrifactorServer

// trifactord: Trifactor's server. Wiring only; everything lives in TrifactorServer.
// Output is flushed, then the process ends without Foundation's exit-time teardown,
// which now and then crashed after the work was done and lost what stdout still held.
let status = Trifactord.main(Array(CommandLine.arguments.dropFirst()))
fflush(nil)
_exit(status)
