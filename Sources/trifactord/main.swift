import Foundation
import TrifactorServer

// trifactord: Trifactor's server. Wiring only; everything lives in TrifactorServer.
exit(Trifactord.main(Array(CommandLine.arguments.dropFirst())))
