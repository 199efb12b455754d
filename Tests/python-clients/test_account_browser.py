"""The security page (`/account`) in Debian's Chromium, as a user walks it: signing in to it without any app,
seeing their factors, sessions with readable device names and recent events, renaming, removing a factor after
a fresh second factor, new recovery codes shown once, signing out another session, and "This wasn't me"; and the
unhappy paths: a form from a session that ended, a forged form, a factor that is gone, a POST address opened by
hand. No page may be a 5xx, raw JSON or a dead end."""

import re
import time
from pathlib import Path

import pytest
import requests

from oidc_support import PASSWORD, running_provider

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
IPHONE = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
          "Version/17.5 Mobile/15E148 Safari/604.1")
SHOTS = Path(__file__).resolve().parents[2] / ".build" / "account-screenshots"
# A proof stays fresh this long here, so a test can see it grow old.
WINDOW = 20


@pytest.fixture(scope="module")
def op():
    with running_provider("--reauth-window", str(WINDOW)) as provider:
        yield provider


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport=PHONE)
    try:
        yield context
    finally:
        context.close()


def sign_in(page, op, user, *, email=True):
    """From the page /account sent the browser to: email, password, authenticator code; back on /account."""
    if email:
        page.get_by_label("Email").fill(user.email)
        page.get_by_role("button", name="Continue").click()
    page.get_by_label("Password").fill(user.password)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_label("Code from your authenticator app").fill(user.next_code())
    page.get_by_role("button", name="Sign in").click()


def open_account(page, op, user):
    page.goto(op.issuer + "/account")
    sign_in(page, op, user)
    page.wait_for_url(op.issuer + "/account")
    assert page.get_by_role("heading", level=1).inner_text() == "Your security"


def fits(page):
    return page.evaluate("document.documentElement.scrollWidth") <= page.viewport_size["width"]


def test_a_user_signs_in_to_the_security_page_and_sees_their_factor_sessions_and_events(context, browser, op):
    user = op.user()
    page = context.new_page()
    open_account(page, op, user)
    main = page.locator("main")
    assert f"Signed in as {user.email}" in main.inner_text()
    factors = page.locator("section", has=page.get_by_role("heading", name="Second factors, passkeys and devices"))
    assert "Phone app" in factors.inner_text() and "Authenticator app" in factors.inner_text()
    sessions = page.locator("section", has=page.get_by_role("heading", name="Where you are signed in"))
    assert "Chrome on Linux" in sessions.inner_text() and "This browser" in sessions.inner_text()
    events = page.locator("section", has=page.get_by_role("heading", name="Recent security events"))
    # One sign-in, listed once: its password step alone (a second factor still due) is not a sign-in.
    signed_in = events.locator("li").filter(has=page.get_by_text("Signed in", exact=True)).filter(
        has_text="Chrome on Linux")
    assert signed_in.count() == 1
    assert fits(page)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "security-phone.png"), full_page=True)

    # A second device signs in: the first lists it by name and signs it out.
    phone = browser.new_context(viewport=PHONE, user_agent=IPHONE)
    try:
        other = phone.new_page()
        open_account(other, op, user)
        page.reload()
        assert "Safari on iPhone" in sessions.inner_text()
        page.set_viewport_size(DESKTOP)
        page.screenshot(path=str(SHOTS / "security-desktop.png"), full_page=True)
        page.set_viewport_size(PHONE)
        page.get_by_role("button", name="Sign out Safari on iPhone").click()
        assert page.get_by_role("status").inner_text() == "That session is signed out."
        assert "Safari on iPhone" not in sessions.inner_text()
        # On the phone, the page asks to sign in again: its session is over.
        other.reload()
        assert other.get_by_label("Email").is_visible()
    finally:
        phone.close()

    # Renaming: the new name, then a refused one (a line break cannot be typed, so it is posted as a page would).
    page.get_by_text("Rename Phone app").click()
    page.get_by_label("New name").fill("Work phone")
    page.get_by_role("button", name="Save name").click()
    assert page.get_by_role("status").inner_text() == "The name is saved."
    assert "Work phone" in factors.inner_text()
    assert "Second factor renamed" in events.inner_text()


def test_removing_a_factor_asks_for_a_fresh_second_factor_then_comes_back_to_the_question(context, op):
    user = op.user()
    page = context.new_page()
    open_account(page, op, user)
    time.sleep(WINDOW + 1)  # the sign-in's proof grows old
    page.get_by_role("link", name="Remove Phone app").click()
    assert page.get_by_role("heading", level=1).inner_text() == "Confirm it's you"
    # Cancelling the new sign-in, still signed in: back to the question, not "Not signed in".
    page.get_by_role("button", name="Confirm it's me").click()
    page.get_by_role("button", name="Cancel and return to Trifactor").click()
    page.wait_for_url(re.compile(r".*/account/remove\?factor=.*"))
    assert page.get_by_role("heading", level=1).inner_text() == "Confirm it's you"
    page.get_by_role("button", name="Confirm it's me").click()
    # A fresh sign-in, even though the session is live (max_age=0), then back to the same question.
    sign_in(page, op, user, email=False) if page.get_by_label("Password").is_visible() else sign_in(page, op, user)
    page.wait_for_url(re.compile(r".*/account/remove\?factor=.*"))
    assert page.get_by_role("heading", level=1).inner_text() == "Remove Phone app?"
    assert "last second factor" in page.locator("main").inner_text()
    page.get_by_role("button", name="Remove Phone app").click()
    assert page.get_by_role("status").inner_text().startswith("It is removed")
    assert "You have no second factor" in page.locator("main").inner_text()
    assert "Second factor removed" in page.locator("main").inner_text()
    # Back to the question, and the factor is gone: a page that says so, with the security page under it.
    page.go_back()
    page.reload()
    assert "no longer on your account" in page.get_by_role("status").inner_text()


def test_new_recovery_codes_are_shown_once_and_the_page_counts_them(context, op):
    user = op.user()
    page = context.new_page()
    open_account(page, op, user)
    assert "You have no recovery codes" in page.locator("main").inner_text()
    page.get_by_role("link", name="Make new recovery codes").click()
    page.get_by_role("button", name="Make new codes").click()
    assert page.get_by_role("heading", level=1).inner_text() == "Your new recovery codes"
    codes = page.locator("ol.codes li").all_inner_texts()
    assert len(codes) == 10 and all(re.fullmatch(r"[0-9A-Z]{5}-[0-9A-Z]{5}", c.strip()) for c in codes), codes
    page.get_by_role("link", name="I have saved them").click()
    assert "Unused recovery codes: 10 of 10." in page.locator("main").inner_text()
    assert "New recovery codes made" in page.locator("main").inner_text()


def test_this_wasnt_me_replaces_the_password_and_signs_out_everywhere(context, browser, op):
    user = op.user()
    phone = browser.new_context(viewport=PHONE, user_agent=IPHONE)
    try:
        other = phone.new_page()
        open_account(other, op, user)
        # Signed in here last, so the proof is still fresh (the window is short in these tests).
        page = context.new_page()
        open_account(page, op, user)
        page.get_by_role("link", name="This wasn't me").click()
        assert page.get_by_role("heading", level=1).inner_text() == "Secure your account"
        # Every factor is offered for removal (someone else may have added one), none ticked: this one is ours.
        ours = page.get_by_role("checkbox", name=re.compile("Phone app"))
        assert not ours.is_checked()
        ours.check()
        page.get_by_label("New password").fill(PASSWORD)
        page.get_by_role("button", name="Secure my account").click()
        assert "different from your current one" in page.get_by_role("alert").inner_text()
        assert ours.is_checked(), "the refused form forgot what was ticked"
        ours.uncheck()
        new_password = "a brand new passphrase 42"
        page.get_by_label("New password").fill(new_password)
        page.get_by_role("button", name="Secure my account").click()
        assert page.get_by_role("heading", level=1).inner_text() == "Your account is secured"
        assert "every session is signed out (2)" in page.locator("main").inner_text()
        other.reload()
        assert other.get_by_label("Email").is_visible(), "the other device is still signed in"
    finally:
        phone.close()
    # The old password no longer signs in; the owner was told by email.
    assert op.srv.call("POST", "/v1/sessions", {"email": user.email, "password": PASSWORD}).status_code == 401
    mails = [m for m in op.srv.outbox() if user.email in str(m.values())]
    assert any("on your account was not you" in str(m.values()) for m in mails), mails
    user.password = new_password
    page.get_by_role("link", name="Sign in again").click()
    sign_in(page, op, user)
    page.wait_for_url(op.issuer + "/account")
    assert "You reported activity that was not you" in page.locator("main").inner_text()


def test_unhappy_paths_answer_pages_with_a_way_on(context, op):
    user = op.user()
    page = context.new_page()
    open_account(page, op, user)
    # A factor that is not (or no longer) the user's.
    answer = page.goto(op.issuer + "/account/remove?factor=" + "x" * 26)
    assert answer.status == 404 and "no longer on your account" in page.get_by_role("status").inner_text()
    # A POST-only address opened by hand: the security page.
    page.goto(op.issuer + "/account/sign-out")
    assert page.url == op.issuer + "/account"
    # A form whose token is not this page's: refused, nothing changed, a link back.
    forged = page.request.post(op.issuer + "/account/sessions/end", form={"csrf": "0" * 64, "session": "others"},
                               max_redirects=0)
    assert forged.status == 400 and "This page is out of date" in forged.text()
    assert "application/json" not in forged.headers.get("content-type", "")
    # Signed out in another tab: the old tab's form leads to signing in, not to an error.
    second = context.new_page()
    second.goto(op.issuer + "/account")
    second.get_by_role("button", name="Sign out").click()
    assert second.get_by_role("heading", level=1).inner_text() == "You are signed out"
    page.get_by_text("Rename Phone app").click()
    page.get_by_label("New name").fill("Old tab")
    page.get_by_role("button", name="Save name").click()
    assert page.get_by_label("Email").is_visible()
    # Nothing was renamed.
    sign_in(page, op, user)
    page.wait_for_url(op.issuer + "/account")
    assert "Old tab" not in page.locator("main").inner_text()
    # Cancelling the sign-in the page starts ends on a page that says so, not in a loop back to signing in.
    stranger = context.browser.new_context(viewport=PHONE)
    try:
        lost = stranger.new_page()
        lost.goto(op.issuer + "/account")
        lost.get_by_role("button", name="Cancel and return to Trifactor").click()
        assert lost.get_by_role("heading", level=1).inner_text() == "Not signed in"
        assert lost.get_by_role("link", name="Try again").get_attribute("href") == "/account"
    finally:
        stranger.close()
    # The page is not an open redirect: a return address elsewhere is never followed.
    r = requests.get(op.issuer + "/account", allow_redirects=False, timeout=10)
    assert r.status_code == 303 and r.headers["Location"].startswith("/authorize/")
