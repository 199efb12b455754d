import Testing
import TrifactorKit
import TrifactorKitTesting

@Suite("Readiness before prompting: what stands in the way, said with the device's biometry")
struct PresenceReadinessTests {
    @Test("Face ID locked out: reported as Face ID and locked, not as 'no biometry'")
    func lockout() {
        let r = PresenceReadiness(policy: .biometrics, canEvaluate: false, laErrorCode: -8, biometry: .faceID)
        #expect(!r.isReady && r.blocker == .biometryLockout && r.biometry == .faceID)
        #expect(r.message == "Face ID is locked after too many tries. Enter your passcode to unlock it.")
    }

    @Test("not enrolled, turned off for the app, no hardware, no passcode: each says its own thing")
    func blockers() {
        #expect(
            PresenceReadiness(policy: .biometrics, canEvaluate: false, laErrorCode: -7, biometry: .touchID).message
                == "Set up Touch ID in Settings first.")
        #expect(
            PresenceReadiness(policy: .biometrics, canEvaluate: false, laErrorCode: -6, biometry: .faceID).message
                == "Face ID is not available right now (it may be turned off for this app in Settings).")
        let none = PresenceReadiness(policy: .biometrics, canEvaluate: false, laErrorCode: -7, biometry: .none)
        #expect(none.blocker == .biometryNotAvailable && none.message == "This device has no Face ID or Touch ID.")
        let noPasscode = PresenceReadiness(
            policy: .biometricsOrPasscode, canEvaluate: false, laErrorCode: -5, biometry: .none)
        #expect(
            noPasscode.blocker == .passcodeNotSet
                && noPasscode.message == LocalAuthenticationError.passcodeNotSet.message)
    }

    @Test("ready: no blocker, no message; a device that cannot tell more is ready for what it can meet")
    func ready() {
        let r = PresenceReadiness(policy: .biometricsOrPasscode, canEvaluate: true, laErrorCode: nil, biometry: .faceID)
        #expect(r.isReady && r.message == nil && r.name == "Face ID")
        let scripted = ScriptedUserPresence(biometry: .none)
        #expect(scripted.readiness(for: .biometricsOrPasscode).isReady)
        #expect(scripted.readiness(for: .biometrics).blocker == .biometryNotAvailable)
    }
}
