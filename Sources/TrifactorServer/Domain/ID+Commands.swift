import Core

// `trifactord review` (Commands/ReviewCommand.swift) spells `VerificationID(id)`
// without importing Core, where typed ids live. These declarations keep that
// spelling compiling while the commands are being rewritten elsewhere; delete
// this file once they import Core.

/// A verification's id (Core's), named for files that do not import Core.
typealias VerificationID = Core.VerificationID

extension ID where Tag == VerificationTag {
    /// The id `raw`, for files that do not import Core (where `init(_:)` lives).
    init<S: StringProtocol>(_ raw: S) { self.init(String(raw)) }
}
