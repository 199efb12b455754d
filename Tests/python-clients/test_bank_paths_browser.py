"""Trifactor Bank's unhappy branches in Chromium, on a phone (390×844) and a desktop (1280×800):
wrong codes to their limits, a new code, Back after a step, refresh, a second tab, an
expired bank session, a half-finished opening carried on. Every response of every page
is watched: any 5xx fails the test. Fields are found by their labels, buttons and links by
their names; screenshots go to $BANK_SCREENSHOTS with the viewport in their names."""

import re
import time

import pytest
import requests
from playwright.sync_api import expect

from test_bank_browser import (MOBILE, PASSWORD, VIEWPORTS, bank, enter_password, hasty_bank, open_account, shot,  # noqa: F401 (fixtures)
                               trifactord)


class Watched:
    """Browser contexts of one viewport whose every response is watched for a 5xx."""

    def __init__(self, browser, name):
        self.browser, self.name, self.failures, self.contexts = browser, name, [], []

    def page(self, **options):
        context = self.browser.new_context(viewport=VIEWPORTS[self.name], **options)
        context.set_default_timeout(10_000)
        context.on("response", lambda r: self.failures.append(f"{r.status} {r.request.method} {r.url}") if r.status >= 500 else None)
        self.contexts.append(context)
        return context.new_page()

    def email(self, who):
        return f"{who}-{self.name}@example.com"


@pytest.fixture(params=list(VIEWPORTS))
def watched(browser, request):
    w = Watched(browser, request.param)
    try:
        yield w
    finally:
        for context in w.contexts:
            context.close()
    assert not w.failures, f"5xx answers: {w.failures}"


def codes(bank, to, channel=None):
    messages = requests.get(f"{bank.trifactor}/dev/outbox", params={"to": to.lstrip("+")}, timeout=5).json()["messages"]
    return [m for m in messages if channel is None or m["channel"] == channel]


def new_code(bank, to, old, channel=None):
    """The newest code sent to `to` once it is not `old` (a resent email code is issued a moment later)."""
    deadline = time.time() + 15
    while time.time() < deadline:
        for m in codes(bank, to, channel):
            found = re.search(r"(?<!\d)\d{6}(?!\d)", m["text"])
            if found:
                if found.group() != old:
                    return found.group()
                break
        time.sleep(0.2)
    raise AssertionError(f"no new code for {to}")


def fill_opening(page, name, email, picture, phrase, phone=MOBILE):
    """The opening form filled (the email too when `email`), not sent."""
    fields = [("Full name", name), ("Password", PASSWORD), ("Mobile number", phone), ("Sitekey phrase", phrase)]
    for label, value in fields + ([("Email", email)] if email else []):
        page.get_by_label(label).fill(value)
    page.get_by_label(picture).check()


def at_the_texted_code(page, bank, email, picture, phrase):
    """A new customer signed out and signed in again as far as the texted code."""
    open_account(page, bank, email, picture=picture, phrase=phrase)
    page.get_by_role("button", name="Sign out").click()
    enter_password(page, email)
    page.get_by_role("button", name=re.compile("Text me a code")).click()


def refresh_is_a_get(page):
    """Refreshing the page after any form asks nothing: it is a GET (Post/Redirect/Get)."""
    assert page.reload().request.method == "GET", page.url


def type_code(page, code, button="Confirm"):
    page.get_by_label("Code", exact=True).fill(code)
    with page.expect_navigation():
        page.get_by_role("button", name=button, exact=True).click()


def wrong_codes(page, count, button="Confirm"):
    for _ in range(count):
        type_code(page, "000000", button)
        refresh_is_a_get(page)


def test_opening_an_account_never_dead_ends(watched, bank):
    page = watched.page()
    email = watched.email("olivia")
    page.goto(bank.url + "/open")
    fill_opening(page, "Olivia Example", email, "kite", "windy hill", phone="123")
    page.get_by_role("button", name="Open my account").click()
    # Refused: back on the form by a redirect, what was typed kept (never the password), the reason next to the field.
    expect(page.get_by_role("alert")).to_contain_text("international form")
    expect(page.get_by_label("Full name")).to_have_value("Olivia Example")
    refresh_is_a_get(page)
    page.get_by_label("Mobile number").fill(MOBILE)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Open my account").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    first = bank.last_code(email)

    # Wrong email codes count five in ten minutes, a new code included: the page says how many are left.
    wrong_codes(page, 2)
    expect(page.get_by_role("alert")).to_have_text("That code is wrong. 3 more tries.")
    shot(page, f"paths-{watched.name}-email-code-wrong")
    page.get_by_role("button", name="Send a new code").click()
    expect(page.get_by_role("status")).to_contain_text("We sent a new code")
    type_code(page, new_code(bank, email, first))
    expect(page.get_by_role("heading", name="Confirm your mobile")).to_be_visible()
    # Back to the email step goes to where the customer is.
    page.go_back()
    expect(page.get_by_role("heading", name="Confirm your mobile")).to_be_visible()

    # Three wrong texted codes use it up (Trifactor ends it then): a new code, then another number.
    texted = bank.last_code(MOBILE, "sms")
    wrong_codes(page, 3)
    expect(page.get_by_role("alert")).to_contain_text("After 3 wrong tries a code stops working")
    shot(page, f"paths-{watched.name}-mobile-code-used-up")
    page.get_by_role("button", name="Send a new code").click()
    expect(page.get_by_role("status")).to_contain_text("We sent a new code")
    assert new_code(bank, MOBILE, texted, "sms") != texted
    page.get_by_text("Change the number").click()
    other = "+447400123499"
    page.get_by_label("Mobile number").fill(other)
    page.get_by_role("button", name="Send the code to this number").click()
    expect(page.get_by_text("We sent a code to")).to_contain_text("3499")
    type_code(page, bank.last_code(other, "sms"))
    expect(page.get_by_role("heading", name="Your accounts")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("Welcome to Trifactor Bank, Olivia Example")


def test_an_opening_left_half_way_carries_on(watched, bank):
    # Left at the mobile step: a sign-in with the password leads to adding the mobile, then the accounts.
    page = watched.page()
    email = watched.email("peter")
    page.goto(bank.url + "/open")
    fill_opening(page, "Peter Example", email, "sailboat", "deep blue")
    page.get_by_role("button", name="Open my account").click()
    type_code(page, bank.last_code(email))
    expect(page.get_by_role("heading", name="Confirm your mobile")).to_be_visible()
    later = watched.page()
    later.goto(bank.url + "/")
    enter_password(later, email)
    expect(later.get_by_role("heading", name="Add two-step verification")).to_be_visible()
    later.get_by_role("button", name="Send me a code").click()
    type_code(later, bank.last_code(MOBILE, "sms"))
    expect(later.get_by_text("Two-step verification is on.")).to_be_visible()
    expect(later.get_by_text("EUR 2,500.00")).to_be_visible()

    # Left before the email code: signing in leads back to the form, which carries on with the same email and password.
    email = watched.email("quinn")
    page = watched.page()
    page.goto(bank.url + "/open")
    fill_opening(page, "Quinn Example", email, "tree", "green shade")
    page.get_by_role("button", name="Open my account").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    later = watched.page()
    later.goto(bank.url + "/")
    enter_password(later, email)
    expect(later.get_by_role("heading", name="Open an account")).to_be_visible()
    expect(later.get_by_role("status")).to_contain_text("You started opening an account with this email but did not finish")
    expect(later.get_by_label("Email")).to_have_value(email)
    fill_opening(later, "Quinn Example", None, "tree", "green shade")
    later.get_by_role("button", name="Open my account").click()
    expect(later.get_by_role("heading", name="Check your email")).to_be_visible()
    type_code(later, bank.last_code(email))
    type_code(later, bank.last_code(MOBILE, "sms"))
    expect(later.get_by_role("heading", name="Your accounts")).to_be_visible()


def test_signing_in_never_dead_ends(watched, bank):
    page = watched.page()
    email = watched.email("rosa")
    at_the_texted_code(page, bank, email, "cactus", "dry heat")
    # A wrong password on the way back in: said next to the field, and a refresh asks nothing.
    page.goto(bank.url + "/")
    enter_password(page, email, "not the password at all")
    expect(page.get_by_role("alert")).to_contain_text("email or password is incorrect")
    refresh_is_a_get(page)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name=re.compile("Text me a code")).click()
    texted = bank.last_code(MOBILE, "sms")
    wrong_codes(page, 3)
    expect(page.get_by_role("alert")).to_contain_text("After 3 wrong tries a code stops working")
    page.get_by_role("button", name="Send a new code").click()
    expect(page.get_by_role("status")).to_contain_text("We sent a new code")
    fresh = new_code(bank, MOBILE, texted, "sms")
    # "Use another way" and back: the choice page, then a code again.
    page.get_by_role("link", name="Use another way").click()
    expect(page.get_by_role("heading", name="Confirm it's you")).to_be_visible()
    page.get_by_role("button", name=re.compile("Text me a code")).click()
    fresh = new_code(bank, MOBILE, fresh, "sms")
    # A second tab starts again: the first tab's form is out of date, does nothing, and says so.
    other = page.context.new_page()
    other.goto(bank.url + "/")
    type_code(page, fresh)
    expect(page.get_by_role("status")).to_contain_text("That page was out of date")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    other.close()
    enter_password(page, email)
    page.get_by_role("button", name=re.compile("Text me a code")).click()
    type_code(page, bank.last_code(MOBILE, "sms"))
    expect(page.get_by_role("heading", name="Your accounts")).to_be_visible()
    # Back after signing in: the sign-in steps go to the accounts.
    page.go_back()
    expect(page.get_by_role("heading", name="Your accounts")).to_be_visible()

    # An expired bank session: a page goes to the sign-in page; a form says nothing was done, never a 5xx.
    page.get_by_role("link", name="Settings").click()
    page.context.clear_cookies(name="bank_session")
    page.get_by_role("button", name="Sign out everywhere else").click()
    expect(page.get_by_text("Your session has ended, so nothing was done")).to_be_visible()
    page.get_by_role("link", name="Go to the start").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    page.goto(bank.url + "/accounts")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()


def test_too_many_wrong_codes_end_the_sign_in(watched, bank):
    page = watched.page()
    at_the_texted_code(page, bank, watched.email("sven"), "snowflake", "cold morning")
    # Three wrong tries end a texted code; the sign-in itself allows five wrong codes in all.
    wrong_codes(page, 3)
    page.get_by_role("button", name="Send a new code").click()
    type_code(page, "000000")
    expect(page.get_by_role("alert")).to_contain_text("1 more try, then you start again")
    type_code(page, "000000")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("that was the last try. The sign-in was cancelled")
    shot(page, f"paths-{watched.name}-sign-in-cancelled")


def test_a_transfer_never_dead_ends(watched, bank):
    page = watched.page()
    email = watched.email("tara")
    open_account(page, bank, email, picture="bicycle", phrase="long ride")
    page.get_by_role("link", name="Make a transfer").click()
    saving = page.get_by_label("To", exact=True).locator("option", has_text="Saving").get_attribute("value")
    # To is another account than From; the payee's fields show only for a payee.
    expect(page.get_by_label("To", exact=True)).to_have_value(saving)
    expect(page.get_by_label("Payee name")).to_be_hidden()
    page.get_by_label("To", exact=True).select_option(label="A payee at another bank")
    expect(page.get_by_label("Payee name")).to_be_visible()
    page.get_by_label("To", exact=True).select_option(value=saving)
    page.get_by_label("Amount in EUR").fill("10")
    page.get_by_label("Reference (optional)").fill("Pocket money")
    page.get_by_role("button", name="Review transfer").click()
    expect(page.get_by_role("heading", name="Check your transfer")).to_be_visible()
    refresh_is_a_get(page)
    # "Change it" keeps what was typed.
    page.get_by_role("link", name="Change it").click()
    expect(page.get_by_label("Amount in EUR")).to_have_value("10")
    expect(page.get_by_label("Reference (optional)")).to_have_value("Pocket money")
    page.get_by_role("button", name="Review transfer").click()
    page.get_by_role("button", name="Confirm transfer").click()
    expect(page.get_by_text("Confirm transfer of EUR 10.00 to your saving account")).to_be_visible()
    first = bank.last_code(MOBILE, "sms")
    wrong_codes(page, 3, "Confirm and send")
    expect(page.get_by_role("alert")).to_contain_text("After 3 wrong tries a code stops working")
    page.get_by_role("button", name="Send a new code").click()
    mine = new_code(bank, MOBILE, first, "sms")

    # A second tab starts another transfer: it gets a text of its own, and this tab's code still works
    # (Trifactor scopes a phone code to what it proves).
    other = page.context.new_page()
    other.goto(bank.url + "/transfer")
    other.get_by_label("Amount in EUR").fill("20")
    other.get_by_role("button", name="Review transfer").click()
    other.get_by_role("button", name="Confirm transfer").click()
    expect(other.get_by_text("Confirm transfer of EUR 20.00 to your saving account")).to_be_visible()
    new_code(bank, MOBILE, mine, "sms")
    type_code(page, mine, "Confirm and send")
    expect(page.get_by_role("status")).to_have_text("Sent EUR 10.00 to your saving account.")
    # Back to the code page: it says the transfer was sent, and sends nothing again.
    page.go_back()
    expect(page.get_by_role("heading", name="Transfer sent")).to_be_visible()
    # The second tab's transfer still waits for its own code; it is cancelled from its code page.
    other.reload()
    expect(other.get_by_text("Confirm transfer of EUR 20.00 to your saving account")).to_be_visible()
    other.get_by_role("button", name="Cancel the transfer").click()
    expect(other.get_by_role("status")).to_have_text("Transfer cancelled. Nothing was moved.")
    expect(other.get_by_text("EUR 2,490.00")).to_be_visible()

    # Both statements show it from their side, with the reference; no horizontal scroll at 320 px.
    other.get_by_role("link", name="Saving").click()
    expect(other.get_by_role("table")).to_contain_text("From Checking")
    expect(other.get_by_role("table")).to_contain_text("Reference: Pocket money")
    expect(other.get_by_role("table")).to_contain_text("+EUR 10.00")
    other.go_back()
    other.get_by_role("link", name="Checking").click()
    expect(other.get_by_role("table")).to_contain_text("To Saving")
    expect(other.get_by_role("table")).to_contain_text("Reference: Pocket money")
    other.set_viewport_size({"width": 320, "height": 700})
    for path in [other.url, "/accounts", "/transfer", "/settings"]:
        other.goto(path if path.startswith("http") else bank.url + path)
        assert other.evaluate("document.documentElement.scrollWidth") <= 320, path


def test_the_payee_fields_follow_the_choice_without_script_too(watched, bank):
    page = watched.page(java_script_enabled=False)
    open_account(page, bank, watched.email("uma"), picture="cup", phrase="green tea")
    page.get_by_role("link", name="Make a transfer").click()
    expect(page.get_by_label("Payee name")).to_be_hidden()
    page.get_by_label("To", exact=True).select_option(label="A payee at another bank")
    expect(page.get_by_label("Payee IBAN")).to_be_visible()


def test_errors_are_pages_and_passkeys_are_offered_only_at_a_name(watched, bank):
    page = watched.page()
    missing = page.goto(bank.url + "/no-such-page")
    assert missing.status == 404
    expect(page.get_by_role("heading", name="There is no such page")).to_be_visible()
    wrong = page.goto(bank.url + "/signin")
    assert wrong.status == 405
    expect(page.get_by_role("link", name="Go to the start")).to_be_visible()
    page.goto(bank.url + "/")
    expect(page.get_by_role("button", name="Sign in with a passkey")).to_be_visible()
    # What "my device" is, next to its button.
    expect(page.get_by_text("Your device is a phone or computer you linked")).to_be_visible()
    page.goto(bank.url.replace("localhost", "127.0.0.1") + "/")
    expect(page.get_by_role("button", name="Continue")).to_be_visible()
    expect(page.get_by_role("button", name="Sign in with a passkey")).to_have_count(0)


def test_recovery_codes_are_copied_downloaded_and_counted_and_a_step_up_says_why(watched, bank):
    page = watched.page(accept_downloads=True)
    email = watched.email("vera")
    open_account(page, bank, email, picture="sun", phrase="warm light")
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=bank.url)
    page.get_by_role("link", name="Settings").click()
    page.get_by_role("button", name="Make new recovery codes").click()
    if page.get_by_role("heading", name="Confirm it's you to make new recovery codes").is_visible():
        page.get_by_role("button", name=re.compile("A text message to")).click()
        type_code(page, bank.last_code(MOBILE, "sms"))
    expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    codes = [c.inner_text() for c in page.locator("ol.codes code").all()]
    assert len(codes) == 10, codes
    page.get_by_role("button", name="Copy the codes").click()
    expect(page.get_by_role("status")).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()").split("\n") == codes
    with page.expect_download() as download:
        page.get_by_role("link", name="Download as a text file").click()
    text = open(download.value.path()).read()
    assert all(code in text for code in codes), text
    expect(page.get_by_role("button", name="Print them")).to_be_visible()
    shot(page, f"paths-{watched.name}-recovery-codes")
    page.get_by_role("button", name="I have saved them").click()
    expect(page.get_by_text(re.compile(r"^10 recovery codes are left \(made on"))).to_be_visible()
    # The TOTP secret in fours, with an otpauth:// link for the phone that has the app.
    page.get_by_role("button", name="Add an authenticator app").click()
    expect(page.get_by_role("link", name="Open it in your authenticator app")).to_have_attribute("href", re.compile("^otpauth://totp/"))
    assert re.fullmatch(r"([A-Z2-7]{4} )+[A-Z2-7]{1,4}", page.locator("main code").inner_text().strip())
    # How to link a device, with the trifactor command line.
    page.get_by_role("link", name="Cancel").click()
    page.get_by_text("How to link a computer").click()
    expect(page.locator("pre.command")).to_contain_text(f"login {email}")


def test_coming_back_offers_the_passkey_first(watched, hasty_bank):
    page = watched.page()
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True}})
    open_account(page, hasty_bank, watched.email("wanda"), picture="owl", phrase="night watch")
    page.get_by_role("link", name="Settings").click()
    page.get_by_role("button", name=re.compile("Add a passkey")).click()
    expect(page.get_by_role("heading", name="Confirm it's you to add a passkey")).to_be_visible()
    page.get_by_role("button", name=re.compile("A text message to")).click()
    type_code(page, hasty_bank.last_code(MOBILE, "sms"))
    page.get_by_role("button", name=re.compile("Add a passkey")).click()
    expect(page.get_by_text("Your passkey is added")).to_be_visible()
    page.get_by_role("link", name="Accounts").click()
    # Away longer than the idle time (3 s here): balances hide, and the passkey is offered first.
    expect(page.get_by_role("heading", name="Welcome back")).to_be_visible(timeout=8_000)
    expect(page.locator("main button").first).to_have_text("Use my passkey (Touch ID, Face ID or a security key)")
    shot(page, f"paths-{watched.name}-welcome-back-passkey")
    page.get_by_role("button", name=re.compile("Use my passkey")).click()
    expect(page.get_by_role("heading", name="Your accounts")).to_be_visible()
    expect(page.get_by_text("EUR 2,500.00")).to_be_visible()


def reset_code(bank, email, old=None):
    """The newest 8-digit password-reset code emailed to `email` once it is not `old` (it is sent a moment later)."""
    deadline = time.time() + 15
    while time.time() < deadline:
        for m in codes(bank, email):
            found = re.search(r"(?<!\d)\d{8}(?!\d)", m["text"])
            if found:
                if found.group() != old:
                    return found.group()
                break
        time.sleep(0.2)
    raise AssertionError(f"no reset code for {email}")


def test_a_forgotten_password_is_reset_with_the_email_and_the_phone(watched, bank):
    page = watched.page()
    email = watched.email("rita")
    open_account(page, bank, email, picture="anchor", phrase="calm harbour")
    page.get_by_role("button", name="Sign out").click()
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("link", name="Forgot your password?").click()
    expect(page.get_by_role("heading", name="Reset your password")).to_be_visible()
    expect(page.get_by_label("Email")).to_have_value(email)
    page.get_by_role("button", name="Email me a code").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    expect(page.get_by_text(f"If there is an account with {email}, we sent it an 8-digit code")).to_be_visible()
    refresh_is_a_get(page)
    code = reset_code(bank, email)

    # A wrong code says how many tries are left; the right one typed with a space is taken as it is.
    page.get_by_label("Code from the email").fill("00000000")
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("alert")).to_contain_text("That code is wrong or has expired. At most 4 more tries.")
    page.get_by_label("Code from the email").fill(f"{code[:4]} {code[4:]}")
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("heading", name="Confirm it's you")).to_be_visible()
    # Back to the code page goes to where the reset is now.
    page.go_back()
    expect(page.get_by_role("heading", name="Confirm it's you")).to_be_visible()

    before = bank.last_code(MOBILE, "sms")
    page.get_by_role("button", name=re.compile("Text me a code")).click()
    expect(page.get_by_role("heading", name="Choose a new password")).to_be_visible()
    texted = new_code(bank, MOBILE, before, "sms")
    # A common password is refused next to its field; the code is not spent by it.
    page.get_by_label("Code", exact=True).fill(texted)
    page.get_by_label("New password").fill("qwerty123")
    page.get_by_role("button", name="Change my password").click()
    expect(page.locator("#f-new_password-error")).to_contain_text("This password is too common")
    expect(page.get_by_label("Code", exact=True)).to_have_value(texted)
    shot(page, f"paths-{watched.name}-reset-common-password")
    # A wrong code says so and keeps the reset going.
    page.get_by_label("Code", exact=True).fill("000000")
    page.get_by_label("New password").fill("harbour lights at dusk")
    page.get_by_role("button", name="Change my password").click()
    expect(page.locator("#f-code-error")).to_contain_text("That code is wrong")
    page.get_by_label("Code", exact=True).fill(f"{texted[:3]} {texted[3:]}")
    page.get_by_label("New password").fill("harbour lights at dusk")
    page.get_by_role("button", name="Change my password").click()

    # Signed out everywhere, at the password page: the old password no longer works, the new one does.
    expect(page.get_by_role("status")).to_contain_text("Your password is changed, and you are signed out everywhere")
    refresh_is_a_get(page)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.locator("#f-password-error")).to_be_visible()
    page.get_by_label("Password").fill("harbour lights at dusk")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Confirm it's you")).to_be_visible()
    # The reset's pages are gone: opening one goes to where the customer is.
    page.goto(bank.url + "/forgot/new")
    expect(page.get_by_role("heading", name="Confirm it's you")).to_be_visible()


def test_a_reset_can_be_abandoned_and_tells_no_one_who_banks_here(watched, bank):
    page = watched.page()
    # An address that banks nowhere gets the same pages; its codes are all wrong, never "no such account".
    page.goto(bank.url + "/signin/password")
    page.goto(bank.url + "/forgot")
    page.get_by_label("Email").fill(watched.email("nobody"))
    page.get_by_role("button", name="Email me a code").click()
    expect(page.get_by_text(f"If there is an account with {watched.email('nobody')}, we sent it an 8-digit code")).to_be_visible()
    for left in [4, 3, 2, 1]:
        page.get_by_label("Code from the email").fill("12345678")
        page.get_by_role("button", name="Continue").click()
        expect(page.get_by_role("alert")).to_contain_text(f"That code is wrong or has expired. At most {left} more tr")
    page.get_by_label("Code from the email").fill("12345678")
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("alert")).to_contain_text("for your safety no email code works until")
    # A new code now sends nothing and says until when.
    page.get_by_role("button", name="Send a new code").click()
    expect(page.get_by_role("status")).to_contain_text("no email code works until")
    # Start again: nothing changed, back at the sign-in page.
    page.get_by_role("button", name="Start again").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_role("status")).to_contain_text("Nothing was changed")
    # A page of the abandoned reset, opened again, is the start.
    page.goto(bank.url + "/forgot/code")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    # Starting again buys no guesses: Trifactor's window still runs, and the code page says so at once.
    page.goto(bank.url + "/forgot")
    page.get_by_label("Email").fill(watched.email("nobody"))
    page.get_by_role("button", name="Email me a code").click()
    expect(page.get_by_role("alert")).to_contain_text("no email code works until")
    expect(page.get_by_label("Code from the email")).to_have_count(0)


def test_starting_an_opening_again_buys_no_email_codes(watched, bank):
    page = watched.page()
    email = watched.email("otto")
    page.goto(bank.url + "/open")
    fill_opening(page, "Otto Example", email, "kite", "high wind")
    page.get_by_role("button", name="Open my account").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    for _ in range(5):
        page.get_by_label("Code", exact=True).fill("000000")
        page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("alert")).to_contain_text("that was the fifth try: for your safety no email code works until")
    # Asking for a new code now sends none and says why, without calling it a wrong code.
    page.get_by_role("button", name="Send a new code").click()
    expect(page.get_by_role("status")).to_contain_text("After five wrong codes, for your safety no email code works until")
    # Starting again with the same email and password: the page says at once that no code works yet.
    page.get_by_role("button", name="Start again").click()
    fill_opening(page, "Otto Example", email, "kite", "high wind")
    page.get_by_role("button", name="Open my account").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text("After five wrong codes, for your safety no email code works until")
    expect(page.get_by_label("Code", exact=True)).to_have_count(0)


def test_leaving_a_reset_midway_says_the_password_is_unchanged(watched, bank):
    page = watched.page()
    page.goto(bank.url + "/forgot")
    page.get_by_label("Email").fill(watched.email("lena"))
    page.get_by_role("button", name="Email me a code").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    page.goto(bank.url + "/")
    expect(page.get_by_role("status")).to_contain_text("You left the password reset, so your password is unchanged")
    refresh_is_a_get(page)
    expect(page.get_by_role("status")).to_have_count(0)
