/// The wire vocabulary (`ProblemCode`, `FactorKind`) and models (`SessionInfo`, `EnrolledFactor`, …) that
/// TrifactorKit's API speaks in, so that an app imports TrifactorKit alone.
@_exported public import API
