import Core

/// Lockouts after failed sign-ins, and the token buckets of sign-ins,
/// sign-ups and verification resends.
extension Setting {
    static let limits: [Setting] = [
        int(
            "TRIFACTOR_LOCKOUT_FREE_ATTEMPTS", "--lockout-free-attempts",
            "Consecutive failed sign-ins at which lockouts start", "5", 1...1000
        ) { $0.lockout.freeAttempts = $1 },
        seconds("TRIFACTOR_LOCKOUT_BASE", "--lockout-base", "First lockout in seconds, doubling per failure", "5") {
            $0.lockout.baseDelay = $1
        },
        seconds("TRIFACTOR_LOCKOUT_MAX", "--lockout-max", "Longest lockout in seconds", "900") {
            $0.lockout.maximumDelay = $1
        },
        rate("TRIFACTOR_SIGNIN_IP_BURST", "--signin-ip-burst", "Sign-in attempts per client IP in a burst", "30") {
            $0.signInPerIPBurst = $1
        },
        rate(
            "TRIFACTOR_SIGNIN_IP_RATE", "--signin-ip-rate", "Sign-in attempts per client IP per second after the burst",
            "0.5"
        ) { $0.signInPerIPRate = $1 },
        rate("TRIFACTOR_SIGNUP_IP_BURST", "--signup-ip-burst", "Sign-ups per client IP in a burst", "10") {
            $0.signUpPerIPBurst = $1
        },
        rate("TRIFACTOR_SIGNUP_IP_RATE", "--signup-ip-rate", "Sign-ups per client IP per second after the burst", "0.1")
        { $0.signUpPerIPRate = $1 },
        rate("TRIFACTOR_RESEND_BURST", "--resend-burst", "Verification resends per email in a burst", "3") {
            $0.resendPerEmailBurst = $1
        },
        rate(
            "TRIFACTOR_RESEND_RATE", "--resend-rate", "Verification resends per email per second after the burst",
            "0.00333"
        ) { $0.resendPerEmailRate = $1 },
    ]
}
