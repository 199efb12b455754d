"""Passkeys in a real browser: Playwright drives Debian's Chromium with a CDP virtual authenticator.

The page `/dev/passkey` (dev mode only) loads `/dev/passkey.js`, which runs the WebAuthn
ceremonies with `navigator.credentials` against the HTTP API. Chromium's virtual authenticator
(CTAP2, internal, resident keys, user verification) answers them. The server runs without TLS:
`http://localhost:PORT` is a secure context, the relying-party id is `localhost`, and dev mode
allows that origin.

Flow: sign up and sign in over HTTP (AAL1 token) → register a passkey in the page → password +
passkey as second factor (AAL2, pwd+hwk) → passwordless with the discoverable passkey (AAL2,
hwk+user) → the authenticator stops reporting user verification: no session.
"""

import os
import uuid

import pytest


PASSWORD = "correct horse battery staple 42"
CALL_TIMEOUT_MS = 15_000  # one ceremony; the server's options ask for 300 s

# Calls window.trifactor[name](...args) in the page; never hangs past `ms`, never throws:
# a rejected promise becomes {status: null, error}.
CALL_JS = """
async ([name, args, ms]) => {
  if (!window.trifactor) return {status: null, error: "window.trifactor is not defined"};
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${name} timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([window.trifactor[name](...args), timeout]);
  } catch (e) {
    return {status: null, error: `${e && e.name}: ${e && e.message}`};
  } finally {
    clearTimeout(timer);
  }
}
"""


@pytest.fixture
def page(browser, http_server):
    context = browser.new_context()
    page = context.new_page()
    console = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    response = page.goto(f"{http_server.base_url}/dev/passkey")
    assert response is not None and response.status == 200, \
        f"GET /dev/passkey -> {response and response.status}"
    page.wait_for_function("() => window.trifactor !== undefined", timeout=5_000)
    page.console_messages = console
    try:
        yield page
    finally:
        context.close()


def call(page, name, *args):
    """window.trifactor[name](*args) in the page: its {status, json} or {status: None, error}."""
    result = page.evaluate(CALL_JS, [name, list(args), CALL_TIMEOUT_MS])
    assert isinstance(result, dict), f"trifactor.{name} returned {result!r}"
    return result


def expect_201(page, name, result):
    assert result.get("status") == 201, (
        f"trifactor.{name} -> {result}\nconsole: {page.console_messages}"
    )
    return result["json"]


def test_passkey_register_second_factor_and_passwordless_in_chromium(http_server, page):
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    authenticator_id = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
        "hasUserVerification": True, "isUserVerified": True,
        "automaticPresenceSimulation": True,
    }})["authenticatorId"]

    # A verified user with an AAL1 session, over plain HTTP.
    email = f"passkey-{uuid.uuid4().hex[:12]}@example.com"
    http_server.create_account(email, PASSWORD, "Passkey Tester")
    token = http_server.sign_in(email, PASSWORD)

    # 1. Register a passkey from the page (navigator.credentials.create).
    enrolled = expect_201(page, "register", call(page, "register", token, "Test laptop"))
    assert enrolled["kind"] == "passkey", enrolled
    assert enrolled["display_name"] == "Test laptop", enrolled
    assert enrolled.get("enrollment_id"), enrolled
    creds = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator_id})["credentials"]
    assert len(creds) == 1 and creds[0]["isResidentCredential"], creds
    assert creds[0]["rpId"] == "localhost", creds

    listed = http_server.expect(200, "GET", "/v1/mfa/enrollments", token=token)
    assert [(e["enrollment_id"], e["kind"]) for e in listed["enrollments"]] == \
        [(enrolled["enrollment_id"], "passkey")], listed

    # 2. Password, then the passkey as second factor: AAL2 with pwd + hwk.
    second = expect_201(page, "secondFactor", call(page, "secondFactor", email, PASSWORD))
    assert second.get("token"), second
    assert second["session"]["aal"] == 2, second
    assert second["session"]["methods"] == ["pwd", "hwk"], second

    # 3. Passwordless: the discoverable passkey alone (user verified): AAL2 with hwk + user.
    alone = expect_201(page, "passwordless", call(page, "passwordless"))
    assert alone.get("token"), alone
    assert alone["session"]["aal"] == 2, alone
    assert alone["session"]["methods"] == ["hwk", "user"], alone
    current = http_server.expect(200, "GET", "/v1/session", token=alone["token"])
    assert current["session"]["aal"] == 2, current

    sessions_before = http_server.expect(200, "GET", "/v1/sessions", token=token)["sessions"]

    # 4. The authenticator stops reporting user verification (UV flag clear): the server
    #    answers 400 invalid_code, or the browser refuses; either way no session.
    cdp.send("WebAuthn.setResponseOverrideBits",
             {"authenticatorId": authenticator_id, "isBadUV": True})
    refused = call(page, "secondFactor", email, PASSWORD)
    assert refused.get("status") != 201, f"a session without user verification: {refused}"
    if refused.get("status") is not None:
        assert refused["status"] == 400, refused
        assert (refused.get("json") or {}).get("code") == "invalid_code", refused
    refused_alone = call(page, "passwordless")
    assert refused_alone.get("status") != 201, \
        f"a passwordless session without user verification: {refused_alone}"

    sessions_after = http_server.expect(200, "GET", "/v1/sessions", token=token)["sessions"]
    assert len(sessions_after) == len(sessions_before), (
        f"sessions before {sessions_before}\nafter {sessions_after}"
    )
