enum WebAuthnPlaceholder {}
