#!/usr/bin/env python3
"""The client half of `make package-test`'s upgrade check, on Python's standard library alone (the machine the
package is installed on needs nothing else): an account with an authenticator app made against one build, and
the same seed signing in against the next.

  upgrade-check.py sign-up URL STATE      create the account (then verify its email on the host)
  upgrade-check.py enroll URL STATE       sign in, enroll TOTP, keep the seed in STATE
  upgrade-check.py sign-in URL STATE      password, then a code from the kept seed: an AAL2 session
Exit 0 on success; otherwise one sentence and exit 1."""
import base64
import hashlib
import hmac
import json
import struct
import sys
import time
import urllib.error
import urllib.request

PASSWORD = "correct horse battery staple 42"


def call(base, method, path, body=None, token=None):
    request = urllib.request.Request(base + path, method=method,
                                     data=json.dumps(body).encode() if body is not None else None)
    request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            raw = answer.read()
            return answer.status, json.loads(raw) if raw else None
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def expect(status, answer, what):
    if answer[0] != status:
        sys.exit(f"upgrade-check: {what} answered {answer[0]}, not {status}: {answer[1]}")
    return answer[1]


def totp(secret, at):
    """RFC 6238 with SHA-1, 6 digits, 30 s steps."""
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    digest = hmac.new(key, struct.pack(">Q", int(at // 30)), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return "%06d" % ((struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000)


def main(verb, base, state_path):
    if verb == "sign-up":
        email = f"upgrade-{int(time.time())}@example.com"
        expect(202, call(base, "POST", "/v1/accounts", {"email": email, "password": PASSWORD}), "sign-up")
        json.dump({"email": email}, open(state_path, "w"))
        print(email)
    elif verb == "enroll":
        state = json.load(open(state_path))
        token = expect(201, call(base, "POST", "/v1/sessions", {"email": state["email"], "password": PASSWORD}),
                       "the first sign-in")["token"]
        started = expect(202, call(base, "POST", "/v1/mfa/enrollments", {"kind": "totp"}, token), "TOTP enrollment")
        enrolled = expect(201, call(base, "POST", f"/v1/mfa/enrollments/{started['enrollment_session']}",
                                    {"code": totp(started["secret"], time.time()), "display_name": "Phone app"},
                                    token), "finishing the enrollment")
        state.update(secret=started["secret"], enrollment_id=enrolled["enrollment_id"])
        json.dump(state, open(state_path, "w"))
    elif verb == "sign-in":
        state = json.load(open(state_path))
        pending = expect(200, call(base, "POST", "/v1/sessions", {"email": state["email"], "password": PASSWORD}),
                         "the password sign-in")
        if not pending.get("mfa_required"):
            sys.exit(f"upgrade-check: the account no longer asks for its second factor: {pending}")
        # The step after now: the enrollment spent the current one, and one step ahead is accepted.
        session = expect(201, call(base, "POST", "/v1/sessions/mfa", {
            "pending_credential": pending["pending_credential"], "enrollment_id": state["enrollment_id"],
            "code": totp(state["secret"], time.time() + 30)}), "the TOTP code from the kept seed")
        if session["session"]["aal"] != 2:
            sys.exit(f"upgrade-check: the session is not AAL2: {session}")
    else:
        sys.exit(f"upgrade-check: unknown step {verb}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
