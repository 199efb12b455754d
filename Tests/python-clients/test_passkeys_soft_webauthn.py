"""Passkeys over the HTTP API with `soft-webauthn`, a software authenticator (ES256, attestation none).

soft-webauthn never sets the user-verified (UV) flag, and trifactord requires user verification
(`userVerification: "required"`). `UVDevice` sets the flag (bit 2, 0x04, of the flags byte at
offset 32 of authenticatorData) in the attestation and in assertions, re-signing the latter;
the unmodified device must be refused.

The plain-HTTP dev server is used: the origin is `http://localhost:PORT`, which dev mode
allows; the TLS server's https origin is not allowed.
"""

import uuid
from base64 import urlsafe_b64decode, urlsafe_b64encode

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from fido2 import cbor
from fido2.utils import sha256
from soft_webauthn import SoftWebauthnDevice

PASSWORD = "correct horse battery staple 42"
UV = 0x04
FLAGS_OFFSET = 32  # after the 32-byte rpIdHash


def b64url(data: bytes) -> str:
    return urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    return urlsafe_b64decode(text + "=" * (-len(text) % 4))


def with_uv(auth_data: bytes) -> bytes:
    return auth_data[:FLAGS_OFFSET] + bytes([auth_data[FLAGS_OFFSET] | UV]) \
        + auth_data[FLAGS_OFFSET + 1:]


class UVDevice(SoftWebauthnDevice):
    """A SoftWebauthnDevice that reports user verification (while `uv` is true)."""

    uv = True

    def create(self, options, origin):
        credential = super().create(options, origin)
        if self.uv:
            response = credential["response"]
            attestation = cbor.decode(response["attestationObject"])
            attestation["authData"] = with_uv(attestation["authData"])  # "none": nothing signed
            response["attestationObject"] = cbor.encode(attestation)
        return credential

    def get(self, options, origin):
        assertion = super().get(options, origin)
        if self.uv:
            response = assertion["response"]
            auth_data = with_uv(response["authenticatorData"])
            response["authenticatorData"] = auth_data
            response["signature"] = self.private_key.sign(
                auth_data + sha256(response["clientDataJSON"]), ec.ECDSA(hashes.SHA256()))
        return assertion


def creation_options(options: dict) -> dict:
    """The server's PublicKeyCredentialCreationOptions JSON as soft-webauthn wants it."""
    return {"publicKey": {
        **options,
        "challenge": unb64url(options["challenge"]),
        "user": {**options["user"], "id": unb64url(options["user"]["id"])},
    }}


def request_options(options: dict) -> dict:
    return {"publicKey": {**options, "challenge": unb64url(options["challenge"])}}


def credential_json(credential: dict) -> dict:
    """A soft-webauthn credential as PublicKeyCredential.toJSON(): base64url, no padding."""
    raw_id = credential["rawId"]
    response = {k: b64url(v) for k, v in credential["response"].items() if v is not None}
    return {"id": b64url(raw_id), "rawId": b64url(raw_id), "type": credential["type"],
            "response": response}


def new_user(server, name):
    email = f"{name}-{uuid.uuid4().hex[:12]}@example.com"
    server.create_account(email, PASSWORD, "Soft WebAuthn Tester")
    return email, server.sign_in(email, PASSWORD)


def begin_enrollment(server, token, device_name="soft"):
    started = server.expect(202, "POST", "/v1/mfa/enrollments",
                            {"kind": "passkey", "device_name": device_name}, token=token)
    assert started.get("enrollment_session"), started
    options = started["options"]
    assert options["rp"]["id"] == "localhost", options
    assert {"type": "public-key", "alg": -7} in options["pubKeyCredParams"], options
    assert options["authenticatorSelection"]["userVerification"] == "required", options
    assert options["attestation"] == "none", options
    assert len(unb64url(options["challenge"])) >= 16, options
    assert unb64url(options["user"]["id"]), options
    return started["enrollment_session"], options


def test_soft_webauthn_passkey_with_uv_enrolls_and_signs_in(http_server):
    server = http_server
    email, token = new_user(server, "soft-uv")
    device = UVDevice()

    # 1. Register: the server's creation options → soft-webauthn → the credential JSON.
    session, options = begin_enrollment(server, token)
    credential = device.create(creation_options(options), server.origin)
    enrolled = server.expect(201, "POST", f"/v1/mfa/enrollments/{session}",
                             {"credential": credential_json(credential)}, token=token)
    assert enrolled["kind"] == "passkey", enrolled
    assert enrolled["display_name"] == "soft", enrolled
    enrollment_id = enrolled["enrollment_id"]
    assert enrollment_id, enrolled

    # 2. Password sign-in now needs the second factor.
    first = server.expect(200, "POST", "/v1/sessions", {"email": email, "password": PASSWORD})
    assert first.get("mfa_required") is True and "token" not in first, first
    pending = first["pending_credential"]
    assert pending, first
    hint = next((h for h in first["hints"] if h.get("enrollment_id") == enrollment_id), None)
    assert hint is not None and hint["kind"] == "passkey", first

    # 3. The challenge: request options for this credential, UV required.
    body = {"pending_credential": pending, "enrollment_id": enrollment_id}
    challenge = server.expect(202, "POST", "/v1/mfa/sign-in/challenges", body)
    req = challenge["options"]
    assert req["rpId"] == "localhost", req
    assert req["userVerification"] == "required", req
    assert [c["id"] for c in req["allowCredentials"]] == [b64url(device.credential_id)], req

    # 4. The assertion: an AAL2 session, password + hardware key.
    assertion = credential_json(device.get(request_options(req), server.origin))
    session2 = server.expect(201, "POST", "/v1/sessions/mfa", {**body, "assertion": assertion})
    assert session2.get("token"), session2
    assert session2["session"]["aal"] == 2, session2
    assert session2["session"]["methods"] == ["pwd", "hwk"], session2
    current = server.expect(200, "GET", "/v1/session", token=session2["token"])
    assert current["session"]["aal"] == 2, current

    # 5. The same assertion again (replay, the challenge is spent): refused.
    r = server.call("POST", "/v1/sessions/mfa", {**body, "assertion": assertion})
    assert r.status_code != 201, f"replayed assertion -> {r.status_code} {r.text}"

    # 6. An assertion without the UV flag (validly signed) is refused on sign-in too.
    first = server.expect(200, "POST", "/v1/sessions", {"email": email, "password": PASSWORD})
    body = {"pending_credential": first["pending_credential"], "enrollment_id": enrollment_id}
    req = server.expect(202, "POST", "/v1/mfa/sign-in/challenges", body)["options"]
    device.uv = False
    no_uv = credential_json(device.get(request_options(req), server.origin))
    device.uv = True
    r = server.call("POST", "/v1/sessions/mfa", {**body, "assertion": no_uv})
    assert r.status_code == 400, f"assertion without UV -> {r.status_code} {r.text}"
    assert r.json().get("code") == "invalid_code", r.text


def test_soft_webauthn_without_uv_is_refused(http_server):
    server = http_server
    email, token = new_user(server, "soft-no-uv")

    # soft-webauthn as published: user present, never user verified.
    session, options = begin_enrollment(server, token, "no uv")
    credential = SoftWebauthnDevice().create(creation_options(options), server.origin)
    assert not cbor.decode(credential["response"]["attestationObject"])["authData"][FLAGS_OFFSET] & UV
    r = server.call("POST", f"/v1/mfa/enrollments/{session}",
                    {"credential": credential_json(credential)}, token=token)
    assert r.status_code == 400, f"registration without UV -> {r.status_code} {r.text}"
    assert r.json().get("code") == "invalid_code", r.text

    # A UV-capable device but the wrong origin (the TLS server's https one is not allowed).
    session, options = begin_enrollment(server, token, "wrong origin")
    credential = UVDevice().create(creation_options(options), f"https://localhost:{server.port}")
    r = server.call("POST", f"/v1/mfa/enrollments/{session}",
                    {"credential": credential_json(credential)}, token=token)
    assert r.status_code == 400, f"registration from https origin -> {r.status_code} {r.text}"
    assert r.json().get("code") == "invalid_code", r.text

    # Nothing was enrolled: the password alone still makes a session.
    listed = server.expect(200, "GET", "/v1/mfa/enrollments", token=token)
    assert listed["enrollments"] == [], listed
    server.sign_in(email, PASSWORD)


def test_soft_webauthn_passkey_approves_a_bound_action_whose_hash_is_in_the_challenge(http_server):
    server = http_server
    email, token = new_user(server, "soft-authz")
    device = UVDevice()
    session, options = begin_enrollment(server, token)
    enrolled = server.expect(201, "POST", f"/v1/mfa/enrollments/{session}",
                             {"credential": credential_json(device.create(creation_options(options), server.origin))},
                             token=token)
    action = {"type": "transfer", "amount": "250.00", "currency": "EUR", "payee": "Alice Example", "source": "ACC-1"}
    created = server.expect(202, "POST", "/v1/authorizations",
                            {"action": action, "enrollment_id": enrolled["enrollment_id"]}, token=token)
    assert created["summary"] == "Confirm transfer of EUR 250.00 to Alice Example", created
    req = created["options"]
    # The challenge ends with the action's hash, so the signature covers the action.
    assert unb64url(req["challenge"])[-32:] == bytes.fromhex(created["action_hash"]), created
    # A signature over another challenge (another action) is refused...
    forged = dict(req, challenge=b64url(unb64url(req["challenge"])[:16] + bytes(32)))
    r = server.call("POST", f"/v1/authorizations/{created['authorization_id']}",
                    {"assertion": credential_json(device.get(request_options(forged), server.origin))}, token=token)
    assert r.status_code == 400, f"assertion over another action -> {r.status_code} {r.text}"
    # ...and the spent challenge cannot be retried: a fresh authorization is needed.
    created = server.expect(202, "POST", "/v1/authorizations",
                            {"action": action, "enrollment_id": enrolled["enrollment_id"]}, token=token)
    approved = server.expect(200, "POST", f"/v1/authorizations/{created['authorization_id']}",
                             {"assertion": credential_json(device.get(request_options(created["options"]), server.origin))},
                             token=token)
    assert approved["status"] == "approved", approved
