import Foundation

// trifactor: the command-line authenticator, on TrifactorKit only.
let code = await CLI.main(Array(CommandLine.arguments.dropFirst()))
// Leave without running exit-time destructors: URLSession's and libcurl's
// threads may still be winding down a cancelled long poll, and tearing
// down Foundation under them crashed the process once in ~10 runs of
// `approve --once`. Everything worth keeping is written by now.
fflush(nil)  // every open output stream
_exit(code)
