"""Authenticator-app MFA (TOTP) driven over HTTPS with `requests`, the codes made by `pyotp`.

An independent RFC 6238 implementation checks what trifactord hands out at enrollment
(the otpauth:// URI and its secret) and makes every code the server is asked to accept:
sign up and verify the email through the dev outbox, sign in, enroll TOTP, sign out, sign
in again (mfa_required), complete with a code, and see a replayed code refused.
"""

import re
import time
import uuid

import pyotp
import pytest
import requests

PASSWORD = "correct horse battery staple 42"
TIMEOUT = 10


class Api:
    """A thin JSON client for one server, trusting its self-signed certificate."""

    def __init__(self, server):
        self.server = server
        self.http = requests.Session()
        self.http.verify = server.cert

    def call(self, method, path, body=None, token=None):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return self.http.request(method, self.server.base_url + path, json=body,
                                 headers=headers, timeout=TIMEOUT)

    def expect(self, status, method, path, body=None, token=None):
        """The answer's JSON (None when empty), asserting its status."""
        r = self.call(method, path, body, token)
        assert r.status_code == status, (
            f"{method} {path} {_redact(body)} -> {r.status_code} "
            f"{r.headers.get('Content-Type')} {r.text}"
        )
        return r.json() if r.content else None


def _redact(body):
    if not isinstance(body, dict):
        return body
    return {k: ("…" if k in ("password",) else v) for k, v in body.items()}


def email_code(server, email: str, timeout: float = 2.0) -> str:
    """The code in the newest email to `email` in the dev outbox."""
    text = server.wait_message(email, "email", timeout)["text"]
    m = re.search(r"(?<!\d)\d{6}(?!\d)", text)
    assert m, f"no 6-digit code in email text {text!r}"
    return m.group(0)


def sign_in(api, email):
    """POST /v1/sessions with the password: the JSON answer (either a session or mfa_required)."""
    r = api.call("POST", "/v1/sessions", {"email": email, "password": PASSWORD})
    assert r.status_code in (200, 201), f"POST /v1/sessions -> {r.status_code} {r.text}"
    return r.status_code, r.json()


def pending_sign_in(api, email, enrollment_id):
    """Password sign-in of an MFA user: no token, a pending credential and a hint for the factor."""
    status, body = sign_in(api, email)
    assert status == 200, f"MFA user's password sign-in -> {status} {body}"
    assert body.get("mfa_required") is True, body
    assert "token" not in body, f"a token before the second factor: {body}"
    assert body.get("pending_credential"), body
    hints = body.get("hints")
    assert isinstance(hints, list) and hints, body
    hint = next((h for h in hints if h.get("enrollment_id") == enrollment_id), None)
    assert hint is not None, f"no hint for enrollment {enrollment_id}: {hints}"
    assert hint["kind"] == "totp" and hint.get("display_name") == "Phone app", hint
    return body["pending_credential"]


@pytest.fixture
def api(server):
    client = Api(server)
    yield client
    client.http.close()


def test_totp_enrollment_and_mfa_sign_in_with_pyotp(server, api):
    email = f"pyotp-{uuid.uuid4().hex[:12]}@example.com"

    # 1. Sign up and verify the email with the code from the dev outbox.
    api.expect(202, "POST", "/v1/accounts",
               {"email": email, "password": PASSWORD, "display_name": "PyOTP Tester"})
    code = email_code(server, email)
    api.expect(200, "POST", "/v1/accounts/verify-email", {"email": email, "code": code})

    # 2. Password sign-in: an AAL1 session.
    status, created = sign_in(api, email)
    assert status == 201, f"first sign-in -> {status} {created}"
    token = created["token"]
    assert token, created
    assert created["session"]["aal"] == 1, created
    assert created["session"]["methods"] == ["pwd"], created

    # 3. Start a TOTP enrollment; pyotp must read the URI the way an authenticator app would.
    started = api.expect(202, "POST", "/v1/mfa/enrollments", {"kind": "totp"}, token=token)
    for field in ("enrollment_session", "secret", "otpauth_uri", "qr_svg"):
        assert started.get(field), f"{field} missing in {started}"
    secret = started["secret"]
    assert re.fullmatch(r"[A-Z2-7]+=*", secret), f"secret is not base32: {secret!r}"
    totp = pyotp.parse_uri(started["otpauth_uri"])
    assert isinstance(totp, pyotp.TOTP), f"{started['otpauth_uri']} parsed as {type(totp)}"
    assert totp.issuer == "Trifactor", started["otpauth_uri"]
    assert totp.name == email, started["otpauth_uri"]
    assert totp.digits == 6, started["otpauth_uri"]
    assert totp.interval == 30, started["otpauth_uri"]
    assert totp.digest().name == "sha1", started["otpauth_uri"]
    assert totp.secret == secret, f"URI secret {totp.secret!r} != secret {secret!r}"
    assert started["qr_svg"].lstrip().startswith("<svg"), started["qr_svg"][:80]
    # The secret field alone gives the same codes as the URI.
    assert pyotp.TOTP(secret).at(time.time()) == totp.at(time.time())

    # 4. Finish it with the current code.
    enrolled = api.expect(201, "POST", f"/v1/mfa/enrollments/{started['enrollment_session']}",
                          {"code": totp.now(), "display_name": "Phone app"}, token=token)
    assert enrolled["kind"] == "totp", enrolled
    assert enrolled["display_name"] == "Phone app", enrolled
    assert enrolled.get("enrolled_at"), enrolled
    enrollment_id = enrolled["enrollment_id"]
    assert enrollment_id, enrolled

    # 5. Sign out; the password alone no longer makes a session.
    api.expect(204, "DELETE", "/v1/session", token=token)
    api.expect(401, "GET", "/v1/session", token=token)
    pending = pending_sign_in(api, email, enrollment_id)

    # 6. The challenge of a TOTP factor sends nothing, but is accepted.
    api.expect(202, "POST", "/v1/mfa/sign-in/challenges",
               {"pending_credential": pending, "enrollment_id": enrollment_id})

    # 7. Complete with the next step's code: the step used by the enrollment is spent
    #    (replay protection), and one step either side of now is accepted.
    mfa_code = totp.at(time.time() + 30)
    session = api.expect(201, "POST", "/v1/sessions/mfa",
                         {"pending_credential": pending, "enrollment_id": enrollment_id,
                          "code": mfa_code})
    token2 = session["token"]
    assert token2, session
    assert session["session"]["aal"] == 2, session
    assert session["session"]["methods"] == ["pwd", "otp"], session
    current = api.expect(200, "GET", "/v1/session", token=token2)
    assert current["session"]["aal"] == 2, current

    # 8. Replay: a new pending sign-in with the same (still in-window) code is refused.
    api.expect(204, "DELETE", "/v1/session", token=token2)
    pending2 = pending_sign_in(api, email, enrollment_id)
    r = api.call("POST", "/v1/sessions/mfa",
                 {"pending_credential": pending2, "enrollment_id": enrollment_id, "code": mfa_code})
    assert r.status_code == 400, f"replayed TOTP code -> {r.status_code} {r.text}"
    assert r.headers.get("Content-Type", "").startswith("application/problem+json"), r.headers
    assert r.json().get("code") == "invalid_code", r.text
    assert "token" not in r.json(), r.text
