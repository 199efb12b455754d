"""The operator's console in Debian's Chromium, by labels and button names: a staff member with the write role
signs in with password and authenticator app, finds a user, opens them, and ends their sessions after confirming
with a passkey (a CDP virtual authenticator) and giving a reason, which the audit log keeps under their id; a
read-only staff member sees no action and a forged POST changes nothing in the database; an account that is not
staff gets the 403 page with a way out; the write staff member then adds a test number (a bad one first, refused by its
field) and removes it. Screenshots of the dashboard, a user's page and the test numbers at phone and desktop size go
to .build/console-screenshots/."""
import hashlib
import re
import sqlite3
import tempfile
import time
import uuid
from pathlib import Path

import pyotp
import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from conftest import _binary, _run, free_port, plain_http_server
from oidc_support import PASSWORD, User

SHOTS = Path(".build/console-screenshots")
SIZES = (("phone", {"width": 390, "height": 844}), ("desktop", {"width": 1280, "height": 800}))
AUTHENTICATOR = {"protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
                 "isUserVerified": True, "automaticPresenceSimulation": True}


@pytest.fixture(scope="module")
def console():
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-console-browser."))
    port = free_port()
    db, key = tmp / "t.db", str(tmp / "k.key")
    with plain_http_server(tmp, [
        "--dev", "--listen", f"127.0.0.1:{port}", "--public-url", f"http://localhost:{port}", "--oidc", "1",
        "--database-url", f"sqlite:{db}", "--key-file", key, "--webauthn-rp-id", "localhost",
        "--argon2-opslimit", "1", "--argon2-memory-kib", "8192",
        "--signin-ip-burst", "1000", "--signin-ip-rate", "100", "--signup-ip-burst", "1000", "--signup-ip-rate", "100",
    ]) as srv:
        srv.issuer, srv.db = f"http://localhost:{port}", db
        srv.cli = lambda *args: _run([_binary(), *args, "--database-url", f"sqlite:{db}", "--key-file", key])
        yield srv


def query(console, sql, *args):
    with sqlite3.connect(console.db) as c:
        return c.execute(sql, args).fetchall()


def account(console, name, token=None) -> User:
    """A verified account with an authenticator app; `token`: a session already made (a passkey's)."""
    email = f"{name}-{uuid.uuid4().hex[:8]}@example.com"
    if token is None:
        console.create_account(email, PASSWORD, name.title())
        token = console.sign_in(email, PASSWORD)
    user = User(email=email)
    started = console.expect(202, "POST", "/v1/mfa/enrollments", {"kind": "totp"}, token=token)
    user.totp = pyotp.TOTP(started["secret"])
    now = time.time()
    user.last_step = int(now // 30) - (1 if now % 30 < 20 else 0)
    console.expect(201, "POST", f"/v1/mfa/enrollments/{started['enrollment_session']}",
                   {"code": user.totp.at(user.last_step * 30), "display_name": "Phone app"}, token=token)
    user.id = query(console, "SELECT id FROM users WHERE email = ?", email)[0][0]
    return user


def passkey_staff(console, browser) -> tuple:
    """An account with a passkey (made in a throwaway browser's authenticator) and an authenticator app: the
    account and the passkey's credential, to be put in the journey's authenticator when it is asked for."""
    email = f"writer-{uuid.uuid4().hex[:8]}@example.com"
    console.create_account(email, PASSWORD, "Wendy Writer")
    context = browser.new_context()
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    authenticator = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR})["authenticatorId"]
    page.goto(f"{console.base_url}/dev/passkey")
    page.wait_for_function("() => window.trifactor !== undefined")
    made = page.evaluate("([t]) => window.trifactor.register(t, 'Laptop')", [console.sign_in(email, PASSWORD)])
    assert made.get("status") == 201, made
    alone = page.evaluate("() => window.trifactor.passwordless()")
    assert alone.get("status") == 201, alone
    credential = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"][0]
    context.close()
    # The account's authenticator app, enrolled on the passkey's (second-factor) session.
    user = User(email=email)
    started = console.expect(202, "POST", "/v1/mfa/enrollments", {"kind": "totp"}, token=alone["json"]["token"])
    user.totp = pyotp.TOTP(started["secret"])
    now = time.time()
    user.last_step = int(now // 30) - (1 if now % 30 < 20 else 0)
    console.expect(201, "POST", f"/v1/mfa/enrollments/{started['enrollment_session']}",
                   {"code": user.totp.at(user.last_step * 30), "display_name": "Phone app"},
                   token=alone["json"]["token"])
    user.id = query(console, "SELECT id FROM users WHERE email = ?", email)[0][0]
    return user, credential


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport=dict(SIZES[1][1]))
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        yield page
    finally:
        context.close()


def sign_in(page, console, user, path="/console"):
    """Opens `path` and signs in on the hosted pages with password and authenticator app."""
    page.goto(console.issuer + path)
    page.wait_for_url(re.compile(r"/authorize/sign-in"))
    page.get_by_label("Email", exact=True).fill(user.email)
    page.get_by_role("button", name="Continue", exact=True).click()
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.wait_for_url(re.compile(r"/authorize/second-factor"))
    other = page.get_by_role("link", name=re.compile(r"^Authenticator app"))
    if page.get_by_label("Code from your authenticator app").count() == 0 and other.count():
        other.first.click()  # the passkey is offered first: the authenticator app is "another way"
        page.get_by_label("Code from your authenticator app").wait_for()
    page.get_by_label("Code from your authenticator app").fill(user.next_code())
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.wait_for_url(re.compile(re.escape(console.issuer + path) + r"$"))


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    for label, size in SIZES:
        page.set_viewport_size(size)
        page.screenshot(path=str(SHOTS / f"{name}-{label}.png"), full_page=True)
        if label == "phone":
            assert page.evaluate("document.documentElement.scrollWidth") <= size["width"], f"{name} is too wide"


def forge_token(page, console):
    """The form token a console page would carry for this browser and session (what a forger with the cookies
    could compute): sha256("csrf:<browser>:console:<session id>")."""
    cookies = {c["name"]: c["value"] for c in page.context.cookies()}
    token_hash = hashlib.sha256(cookies["tf_session"].encode()).hexdigest()
    session = query(console, "SELECT id FROM sessions WHERE token_hash = ?", token_hash)[0][0]
    return hashlib.sha256(f"csrf:{cookies['tf_browser']}:console:{session}".encode()).hexdigest()


def test_a_write_staff_member_finds_a_user_confirms_with_a_passkey_and_the_reason_is_audited(console, browser, page):
    writer, credential = passkey_staff(console, browser)
    target = account(console, "target")
    console.cli("staff", "grant", writer.email, "--role", "write")
    sign_in(page, console, writer)
    page.get_by_role("heading", name="Operator's console").wait_for()
    assert page.get_by_role("region", name="Charts").count() + page.locator("#charts").count() >= 1
    # The charts' tables say what the audit log says: sign-ins that issued a session, and the users per method.
    made = query(console, "SELECT COUNT(*) FROM audit_log WHERE kind = 'signin.succeeded' AND detail LIKE 'aal=%'")[0][0]
    sign_ins = page.locator("#sign-ins")
    sign_ins.get_by_text("Show the numbers").click()
    succeeded = sign_ins.locator("tbody tr").evaluate_all(
        "rows => rows.map(r => Number(r.querySelectorAll('td')[0].textContent))")
    assert len(succeeded) == 24 and sum(succeeded) == made > 0, (succeeded, made)
    methods = page.locator("#methods")
    methods.get_by_text("Show the numbers").click()
    totp_users = query(console, "SELECT COUNT(DISTINCT user_id) FROM mfa_factors WHERE kind = 'totp'")[0][0]
    row = methods.get_by_role("row", name=re.compile("^Authenticator app"))
    assert row.locator("td").first.inner_text() == str(totp_users) and totp_users > 0
    sign_ins.get_by_text("Show the numbers").click()
    methods.get_by_text("Show the numbers").click()
    shot(page, "dashboard")
    page.get_by_label("Find a user").fill(target.email)
    page.get_by_role("button", name="Search").click()
    page.get_by_role("link", name=target.email).click()
    page.wait_for_url(re.compile(rf"/console/users/{target.id}$"))
    for heading in ("Account", "Second factors", "Passkeys", "Devices", "Live sessions", "Recent audit events"):
        page.get_by_role("heading", name=heading, exact=True).wait_for()
    assert page.get_by_role("button", name="End all sessions").count() == 0, "an action before the fresh proof"
    shot(page, "user")
    # The fresh proof: the passkey, put in this browser's authenticator only now (so the sign-in above used the
    # password and the authenticator app).
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    authenticator = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": AUTHENTICATOR})["authenticatorId"]
    cdp.send("WebAuthn.addCredential", {"authenticatorId": authenticator, "credential": credential})
    page.get_by_role("link", name="Confirm it's you").first.click()
    back = re.compile(rf"/console/users/{target.id}$")
    try:
        # The sign-in page offers the passkey as the email field's autofill: the authenticator answers by itself.
        page.wait_for_url(back, timeout=8_000)
    except PlaywrightTimeout:
        page.get_by_role("button", name=re.compile("passkey")).first.click(no_wait_after=True)
        page.wait_for_url(back)
    page.get_by_role("button", name="End all sessions").click()
    # The reason is required: the browser asks for it before anything is sent.
    assert page.evaluate("document.querySelector('#f-reason').validity.valueMissing"), "no reason asked"
    assert "done=" not in page.url
    page.get_by_label("Reason").fill("Ticket 4711: the user lost their phone")
    page.get_by_role("button", name="End all sessions").click()
    page.wait_for_url(re.compile(r"done=revoke-sessions"))
    assert "Every session of the account has ended" in page.get_by_role("status").inner_text()
    detail = query(console, "SELECT detail FROM audit_log WHERE kind = 'admin.sessions_revoked' AND user_id = ?",
                   target.id)
    assert detail and detail[0][0].startswith(f"admin=staff:{writer.id} ") and \
        detail[0][0].endswith("reason=Ticket 4711: the user lost their phone"), detail
    # Back after the action: the page again (no resubmission, no error).
    answer = page.go_back()
    assert answer is None or answer.status < 500
    add_and_remove_a_test_number(console, page, writer)


def add_and_remove_a_test_number(console, page, writer):
    """Within the same fresh proof: a test number refused with the error by its field, added, then removed, each
    reason in the audit log."""
    page.goto(f"{console.issuer}/console/test-numbers")
    page.get_by_role("heading", name="Add a test number").wait_for()
    page.get_by_label("Phone number").fill("call me")
    page.get_by_label("Code", exact=True).fill("2468")
    page.locator("#f-reason").fill("QA team's test phone")
    page.get_by_role("button", name="Add test number").click()
    error = page.locator("#f-number-error")
    assert "country code" in error.inner_text() and page.get_by_label("Phone number").get_attribute("aria-invalid")
    assert query(console, "SELECT COUNT(*) FROM test_numbers") == [(0,)]
    page.get_by_label("Phone number").fill("+44 7700 900123")
    page.locator("#f-reason").fill("QA team's test phone")
    page.get_by_role("button", name="Add test number").click()
    page.wait_for_url(re.compile(r"done=added"))
    assert query(console, "SELECT number, code FROM test_numbers") == [("447700900123", "2468")]
    shot(page, "test-numbers")
    row = page.get_by_role("row", name=re.compile(r"\+447700900123"))
    row.get_by_label("Reason").fill("QA is done")
    row.get_by_role("button", name="Remove").click()
    page.wait_for_url(re.compile(r"done=removed"))
    assert "real number again" in page.get_by_role("status").inner_text()
    assert query(console, "SELECT COUNT(*) FROM test_numbers") == [(0,)]
    details = [d for (d,) in query(console, "SELECT detail FROM audit_log WHERE kind LIKE 'admin.test_number_%' "
                                            "ORDER BY seq")]
    assert details == [f"admin=staff:{writer.id} number=447700900123 reason=QA team's test phone",
                       f"admin=staff:{writer.id} number=447700900123 reason=QA is done"], details


def test_a_read_only_staff_member_sees_no_action_and_a_forged_post_changes_nothing(console, page):
    reader, target = account(console, "reader"), account(console, "target")
    console.cli("staff", "grant", reader.email, "--role", "read")
    sign_in(page, console, reader, path=f"/console/users/{target.id}")
    page.get_by_role("heading", name="Account", exact=True).wait_for()
    assert "read-only" in page.inner_text("main")
    for name in ("Disable account", "End all sessions", "Reset second factors", "Mark email verified",
                 "Confirm it's you"):
        assert page.get_by_role("button", name=name).count() + page.get_by_role("link", name=name).count() == 0
    before = query(console, "SELECT disabled_at, email_verified_at FROM users WHERE id = ?", target.id)
    factors = query(console, "SELECT COUNT(*) FROM mfa_factors WHERE user_id = ?", target.id)
    answer = page.request.post(f"{console.issuer}/console/users/{target.id}",
                               form={"csrf": forge_token(page, console), "action": "disable", "reason": "forged"})
    assert answer.status == 403 and "read-only" in answer.text()
    assert query(console, "SELECT disabled_at, email_verified_at FROM users WHERE id = ?", target.id) == before
    assert query(console, "SELECT COUNT(*) FROM mfa_factors WHERE user_id = ?", target.id) == factors
    assert query(console, "SELECT COUNT(*) FROM audit_log WHERE kind = 'admin.user_disabled' AND user_id = ?",
                 target.id) == [(0,)]
    assert query(console, "SELECT COUNT(*) FROM audit_log WHERE kind = 'staff.refused' AND user_id = ?",
                 reader.id) == [(1,)]


def test_an_account_that_is_not_staff_gets_the_403_page_with_a_way_out(console, page):
    user = account(console, "customer")
    sign_in(page, console, user)
    assert page.get_by_role("heading", level=1).inner_text() == "This account is not staff"
    assert page.get_by_role("link", name="Sign out").is_visible()
    page.get_by_role("link", name="Sign out").click()
    page.get_by_role("heading", level=1).wait_for()
    assert "/logout" in page.url


def test_a_reader_pages_through_the_audit_log_and_every_list_answers_a_page(console, page):
    reader = account(console, "auditor")
    console.cli("staff", "grant", reader.email, "--role", "read")
    for _ in range(3):  # enough entries for more than one page of 50
        account(console, "filler")
    sign_in(page, console, reader, path="/console/audit")
    page.get_by_role("heading", level=1).wait_for()
    rows = page.locator("main table tbody tr")
    assert rows.count() == 50, rows.count()
    newest = int(rows.first.locator("td, th").first.inner_text())
    page.get_by_role("link", name=re.compile("Older")).click()
    older = int(page.locator("main table tbody tr").first.locator("td, th").first.inner_text())
    assert older < newest - 49, (newest, older)
    # A filter by kind: only that kind, as many as the log has.
    page.get_by_label("Kind").select_option("account.created")
    page.get_by_role("button", name="Filter").click()
    kinds = page.locator("main table tbody tr").evaluate_all(
        "rows => rows.map(r => r.querySelectorAll('td, th')[2].textContent.trim())")
    made = query(console, "SELECT COUNT(*) FROM audit_log WHERE kind = 'account.created'")[0][0]
    assert set(kinds) == {"account.created"} and len(kinds) == min(made, 50), (kinds, made)
    # An address as a customer typed it, in capitals: found, and its audit events by address too.
    page.goto(f"{console.issuer}/console/users?q=" + reader.email.upper().replace("@", "%40"))
    assert page.get_by_role("link", name=reader.email).count() == 1
    page.goto(f"{console.issuer}/console/audit?user=" + reader.email.replace("@", "%40"))
    users = page.locator("main table tbody tr").evaluate_all(
        "rows => rows.map(r => r.querySelectorAll('td, th')[4].textContent.trim())")
    assert users and set(users) == {reader.id}, users
    # Search: nothing found is a sentence; the lists are pages; an unknown account a page with a way on.
    page.goto(f"{console.issuer}/console/users?q=nobody%40example.com")
    assert "No account" in page.inner_text("main")
    answer = page.goto(f"{console.issuer}/console/webhooks/nope")
    assert answer.status == 200 and page.url.endswith("/console/webhooks")
    for path, heading in (("/console/clients", "Clients"), ("/console/webhooks", "Webhooks"),
                          ("/console/test-numbers", "Test numbers")):
        answer = page.goto(console.issuer + path)
        assert answer.status == 200 and heading in page.get_by_role("heading", level=1).inner_text(), path
    answer = page.goto(f"{console.issuer}/console/users/{uuid.uuid4()}")
    assert answer.status == 404 and page.locator("main a").count() > 0
