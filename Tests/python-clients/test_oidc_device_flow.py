"""The OAuth 2.0 Device Authorization Grant (RFC 8628): `POST /device_authorization`, the token endpoint's polls
and their errors (§3.5: authorization_pending, slow_down, access_denied, expired_token), the hosted `/device` pages
(a code typed as people type it, the hosted sign-in with password and TOTP, Approve and Deny, Back after deciding,
too many guesses), and `trifactor login --device` in a pseudo-terminal, approved in Chromium."""

import json
import os
import re
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import pexpect
import pytest
import requests

from test_cli_pty import _cli
from oidc_support import (  # noqa: F401
    TIMEOUT, Browser, forms_of, oauth_error, op, running_provider, sign_in_for_code, verify_access_token,
    verify_id_token,
)

GRANT = "urn:ietf:params:oauth:grant-type:device_code"
PASSPHRASE = "a long vault passphrase"


def device_client(op, auth_method="none", grants=f"{GRANT} refresh_token", **kw):
    return op.register(auth_method=auth_method, grants=grants, prefix="dev", name=kw.pop("name", None) or "Build Box",
                       **kw)


def start(op, client, scope="openid", base=None) -> dict:
    r = op.post(client, "/device_authorization", {"scope": scope}, base=base)
    assert r.status_code == 200, f"{r.status_code} {r.text}"
    assert "no-store" in r.headers.get("Cache-Control", ""), r.headers
    return r.json()


def poll(op, client, device_code, base=None) -> requests.Response:
    return op.token(client, {"grant_type": GRANT, "device_code": device_code}, base=base)


def enter(browser: Browser, typed: str) -> requests.Response:
    """Types `typed` into the /device form, as a browser posts it (the page's CSRF token with it)."""
    page = browser.http.get(browser.base + "/device", timeout=TIMEOUT)
    assert page.status_code == 200, page.text
    form = next(f for f in forms_of(page.text).forms if f["action"] == "/device")
    return browser.http.post(browser.base + "/device", data={**form["inputs"], "user_code": typed},
                             allow_redirects=False, timeout=TIMEOUT)


def decide(op, user, typed, decision="approve", browser=None, client_name="Build Box") -> Browser:
    """Enters the code, signs in through the hosted pages (password, TOTP), and approves or denies."""
    browser = browser or Browser(op)
    outcome = browser.follow(enter(browser, typed), user)
    assert outcome.kind == "redirect" and urlsplit(outcome.location).path == "/device/confirm", outcome.describe()
    page = browser.http.get(outcome.location, timeout=TIMEOUT)
    assert page.status_code == 200 and client_name in page.text, page.text
    form = next(f for f in forms_of(page.text).forms if f["action"] == "/device/confirm")
    r = browser.http.post(op.issuer + "/device/confirm", data={**form["inputs"], "decision": decision},
                          allow_redirects=False, timeout=TIMEOUT)
    # The page after the decision reads the outcome from the device code, through this browser's flow: the address
    # carries no outcome anyone could write.
    assert r.status_code == 303 and urlsplit(r.headers["Location"]).path == "/device/done", r.headers
    assert "outcome" not in r.headers["Location"]
    done = browser.http.get(op.issuer + r.headers["Location"], timeout=TIMEOUT)
    assert done.status_code == 200
    title = "Device connected" if decision == "approve" else "Request denied"
    assert title in done.text, done.text
    # Under the client's name, as the sign-in and confirmation pages before it.
    assert client_name in done.text.split("</header>")[0], done.text
    browser.confirmation = outcome.location
    browser.done = op.issuer + r.headers["Location"]
    return browser


def human_page(r: requests.Response, status: int):
    assert r.status_code == status, f"{r.status_code} {r.text[:400]}"
    assert r.headers["Content-Type"].startswith("text/html"), r.headers
    assert "default-src 'none'" in r.headers.get("Content-Security-Policy", "")


def test_discovery_offers_the_device_grant(op):
    assert op.metadata["device_authorization_endpoint"] == op.issuer + "/device_authorization"
    assert GRANT in op.metadata["grant_types_supported"]


def test_polling_faster_than_the_interval_is_slow_down_and_the_interval_grows_by_five_seconds(op):
    client = device_client(op)
    started = start(op, client)
    oauth_error(poll(op, client, started["device_code"]), 400, "authorization_pending")
    assert "10" in oauth_error(poll(op, client, started["device_code"]), 400, "slow_down")["error_description"]
    assert "15" in oauth_error(poll(op, client, started["device_code"]), 400, "slow_down")["error_description"]
    with op.instance("--clock-offset", "14") as early:  # 14 s after the last poll, the interval being 15 s
        oauth_error(poll(op, client, started["device_code"], base=early), 400, "slow_down")
    with op.instance("--clock-offset", "60") as later:
        oauth_error(poll(op, client, started["device_code"], base=later), 400, "authorization_pending")


def test_pending_then_tokens_once_for_the_client_the_code_is_bound_to(op):
    client, other = device_client(op), device_client(op, name="Other Box")
    started = start(op, client, "openid email")
    assert re.fullmatch(r"[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}", started["user_code"]), started
    assert started["verification_uri"] == op.issuer + "/device"
    assert started["verification_uri_complete"] == op.issuer + "/device?user_code=" + started["user_code"]
    assert started["expires_in"] == 600 and started["interval"] == 5

    oauth_error(poll(op, other, started["device_code"]), 400, "invalid_grant")  # bound to its client
    oauth_error(poll(op, client, started["device_code"]), 400, "authorization_pending")
    user = op.user()
    decide(op, user, started["user_code"])
    time.sleep(5.1)  # the interval
    r = poll(op, client, started["device_code"])
    assert r.status_code == 200, r.text
    tokens = r.json()
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "openid email" and tokens["refresh_token"]
    oauth_error(poll(op, client, started["device_code"]), 400, "invalid_grant")  # used once
    claims = verify_id_token(op, tokens["id_token"], client.id)
    assert claims["acr"] == "urn:trifactor:acr:mfa" and "otp" in claims["amr"], claims
    assert "nonce" not in claims
    access = verify_access_token(op, tokens["access_token"])
    assert access["client_id"] == client.id and access["sub"] == claims["sub"]
    assert op.userinfo(tokens["access_token"]).json()["email"] == user.email
    refreshed = op.token(client, {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]})
    assert refreshed.status_code == 200, refreshed.text


def test_a_denied_device_hears_access_denied_and_back_on_the_page_is_no_dead_end(op):
    client = device_client(op)
    started = start(op, client)
    browser = decide(op, op.user(), started["user_code"], decision="deny")
    with op.instance("--clock-offset", "30") as later:
        oauth_error(poll(op, client, started["device_code"], base=later), 400, "access_denied")
    # Back to the confirmation, or the form posted again: a page saying so, with a way on.
    for r in (browser.http.get(browser.confirmation, timeout=TIMEOUT),
              enter(browser, started["user_code"])):
        human_page(r, 409)
        assert 'href="/device"' in r.text or 'action="/device"' in r.text


def test_an_expired_code_is_expired_token_and_says_so_on_the_page(op):
    client = device_client(op)
    started = start(op, client)
    with op.instance("--clock-offset", "601") as later:
        oauth_error(poll(op, client, started["device_code"], base=later), 400, "expired_token")
        r = enter(Browser(op, base=later), started["user_code"])
        human_page(r, 400)
        assert "expired" in r.text


def test_a_code_typed_in_lower_case_with_a_space_works_and_only_once(op):
    client = device_client(op, name="Lower Box")
    started = start(op, client)
    typed = started["user_code"].lower().replace("-", " ")
    browser = decide(op, op.user(), typed, client_name="Lower Box")
    # Back after approving, and the form sent again with the same code: pages, never a 5xx. Back says what became of
    # this request, under the client's name (not a generic "ended" under the server's).
    back = browser.http.get(browser.confirmation, timeout=TIMEOUT)
    human_page(back, 409)
    assert "Lower Box can now use your account" in back.text, back.text
    assert "Lower Box" in back.text.split("</header>")[0] and "You are signing in to Lower Box" in back.text
    again = enter(browser, started["user_code"])
    human_page(again, 409)
    assert "already used" in again.text
    r = browser.http.post(op.issuer + "/device/confirm", data={"decision": "approve"}, timeout=TIMEOUT)
    human_page(r, 409)


def test_a_wrong_code_stays_on_the_form_with_an_error_and_the_code_prefills_from_the_link(op):
    browser = Browser(op)
    for typed in ("BCDF-GHJK", "12345", ""):
        r = enter(browser, typed)
        human_page(r, 400)
        assert 'role="alert"' in r.text and 'action="/device"' in r.text
    prefilled = browser.http.get(op.issuer + "/device?user_code=bcdfghjk", timeout=TIMEOUT)
    assert 'value="BCDF-GHJK"' in prefilled.text
    # Without the page's CSRF token: the form again, nothing checked.
    r = requests.post(op.issuer + "/device", data={"user_code": "BCDF-GHJK"}, timeout=TIMEOUT)
    human_page(r, 400)


def test_the_client_must_have_the_grant_and_authenticate_as_at_the_token_endpoint(op):
    plain = op.register(auth_method="none")
    oauth_error(op.post(plain, "/device_authorization", {"scope": "openid"}), 400, "unauthorized_client")
    confidential = device_client(op, auth_method="client_secret_basic")
    started = start(op, confidential)
    assert started["device_code"]
    confidential.secret = "wrong"
    oauth_error(op.post(confidential, "/device_authorization", {"scope": "openid"}), 401, "invalid_client")
    narrow = device_client(op, scopes="openid")
    oauth_error(op.post(narrow, "/device_authorization", {"scope": "openid profile"}), 400, "invalid_scope")
    r = op.post(plain, "/token", {"grant_type": GRANT, "device_code": started["device_code"]})
    oauth_error(r, 400, "unauthorized_client")


def test_guessing_user_codes_is_limited_per_address_before_any_code_is_looked_at():
    with running_provider() as provider:
        client = device_client(provider)
        started = start(provider, client)
        browser = Browser(provider)
        for _ in range(20):
            human_page(enter(browser, "BCDF-GHJK" if started["user_code"] != "BCDF-GHJK" else "ZZZZ-ZZZZ"), 400)
        limited = enter(browser, started["user_code"])  # even the right code, once the address is limited
        human_page(limited, 429)
        assert int(limited.headers["Retry-After"]) > 0
        assert "Too many tries" in limited.text


# ----------------------------------------------------------------------------- the CLI

@pytest.fixture
def cli_env():
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-cli."))
    (tmp / "run").mkdir(mode=0o700)
    env = dict(os.environ)
    env.pop("TRIFACTOR_VAULT_PASSPHRASE_FILE", None)
    env.update({"XDG_DATA_HOME": str(tmp / "data"), "XDG_RUNTIME_DIR": str(tmp / "run"), "TERM": "dumb"})
    return env


def test_trifactor_login_device_in_a_terminal_approved_in_chromium(op, browser, cli_env):
    client = device_client(op, name="Terminal Box")
    user = op.user()
    child = pexpect.spawn(_cli(), ["login", "--device", "--issuer", op.issuer, "--client-id", client.id,
                                   "--scopes", "openid email"], env=cli_env, encoding="utf-8", timeout=60)
    child.expect(r"open (\S+)\r?\n")
    assert child.match.group(1) == op.issuer + "/device"
    child.expect(r"enter the code ([A-Z]{4}-[A-Z]{4})")
    code = child.match.group(1)
    child.expect("Or scan this code:")
    child.expect("█")  # the QR code, drawn in half blocks

    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        page.goto(f"{op.issuer}/device?user_code={code}")
        assert page.get_by_label("Code").input_value() == code
        page.get_by_role("button", name="Continue").click()
        page.get_by_label("Email").fill(user.email)
        page.get_by_role("button", name="Continue").click()
        page.get_by_label("Password").fill(user.password)
        page.get_by_role("button", name="Sign in").click()
        page.get_by_label("Code from your authenticator app").fill(user.next_code())
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(re.compile(r".*/device/confirm.*"))
        assert "Terminal Box" in page.get_by_role("heading", level=1).inner_text()
        assert user.email in page.content()
        page.get_by_role("button", name="Approve").click()
        page.wait_for_url(re.compile(r".*/device/done.*"))
        assert page.get_by_role("heading", level=1).inner_text() == "Device connected"
        page.go_back()  # Back to the decided confirmation: a page with a way on, not an error
        assert page.get_by_role("link", name="Enter a code").is_visible()
    finally:
        context.close()

    # The first secret stored for a profile creates its vault.
    child.expect("New vault passphrase: ")
    child.sendline(PASSPHRASE)
    child.expect("Again: ")
    child.sendline(PASSPHRASE)
    child.expect(rf"Signed in as \S+ at {re.escape(op.issuer)} \(acr urn:trifactor:acr:mfa, amr ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_trifactor_login_device_json_denied_exits_3(op, cli_env):
    client = device_client(op, name="Json Box")
    child = pexpect.spawn(_cli(), ["--json", "login", "--device", "--issuer", op.issuer, "--client-id", client.id],
                          env=cli_env, encoding="utf-8", timeout=60)
    child.expect(r"(\{.*\"status\":\"enter_code\".*\})\r?\n")
    shown = json.loads(child.match.group(1))
    assert shown["verification_uri_complete"].endswith(shown["user_code"])
    decide(op, op.user(), shown["user_code"], decision="deny", client_name="Json Box")
    child.expect(r"(\{\"error\".*\})\r?\n")
    assert json.loads(child.match.group(1))["exit_code"] == 3
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3


def test_a_decision_posted_after_another_account_signed_in_in_another_tab_is_not_taken(op):
    client, alice, bob = device_client(op), op.user(), op.user()
    code = start(op, client)
    browser = Browser(op)
    outcome = browser.follow(enter(browser, code["user_code"]), alice)
    assert urlsplit(outcome.location).path == "/device/confirm", outcome.describe()
    page = browser.http.get(outcome.location, timeout=TIMEOUT)
    assert alice.email in page.text
    form = next(f for f in forms_of(page.text).forms if f["action"] == "/device/confirm")
    # Another tab of the same browser: Bob signs in to an app, so the browser's session is now his.
    app = op.register(first_party=True, name="Mail")
    signed = sign_in_for_code(op, browser, app, bob, prompt="login")
    assert signed.code
    # Alice's page, still open, posts Approve: the device is not given Bob's account; the page is drawn again for him.
    r = browser.http.post(op.issuer + "/device/confirm", data={**form["inputs"], "decision": "approve"},
                          allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 303 and urlsplit(r.headers["Location"]).path == "/device/confirm", r.headers
    again = browser.http.get(op.issuer + r.headers["Location"], timeout=TIMEOUT)
    assert bob.email in again.text and alice.email not in again.text
    oauth_error(poll(op, client, code["device_code"]), 400, "authorization_pending")


def test_the_done_page_shows_the_outcome_from_the_server_never_from_its_address(op):
    client = device_client(op, name="Forged Box")
    started = start(op, client)
    denied = decide(op, op.user(), started["user_code"], decision="deny", client_name="Forged Box")
    # The same page, its address edited to say approved: the outcome stays the device code's.
    forged = denied.http.get(denied.done + "&outcome=approved", timeout=TIMEOUT)
    assert "Request denied" in forged.text and "Device connected" not in forged.text, forged.text
    assert "Forged Box was not given access" in forged.text
    # An address made up, or this flow's page in another browser: a neutral page, no outcome.
    for browser, url in ((Browser(op), op.issuer + "/device/done?outcome=approved"), (Browser(op), denied.done)):
        r = browser.http.get(url, timeout=TIMEOUT)
        assert "Device connected" not in r.text and "Request denied" not in r.text, r.text
        assert r.headers["Content-Type"].startswith("text/html")
    oauth_error(poll(op, client, started["device_code"]), 400, "access_denied")
