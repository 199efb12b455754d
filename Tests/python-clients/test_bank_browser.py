"""Trifactor Bank in Chromium, journey by journey, as a customer drives it: fields found by
their labels, buttons by their names, codes read from the dev phone (trifactord's dev
outbox), against trifactord and trifactor-bank started for the module. Screenshots of
the key screens go to $BANK_SCREENSHOTS (default .build/bank-screenshots)."""

import json
import os
import re
import secrets
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import pytest
import requests
from playwright.sync_api import expect

from conftest import START_TIMEOUT, _binary, _Daemon, wait_until

BANK = os.environ.get("TRIFACTOR_BANK", ".build/debug/trifactor-bank")
SHOTS = Path(os.environ.get("BANK_SCREENSHOTS", ".build/bank-screenshots"))
PASSWORD = "correct horse battery staple 7"
MOBILE = "+447400123456"


class Bank:
    def __init__(self, trifactor_port: int, url: str):
        self.trifactor = f"http://127.0.0.1:{trifactor_port}"
        self.url = url

    def last_code(self, to: str, channel: str = None) -> str:
        messages = requests.get(f"{self.trifactor}/dev/outbox", params={"to": to.lstrip("+")}, timeout=5).json()["messages"]
        for m in messages:
            if channel is None or m["channel"] == channel:
                found = re.search(r"(?<!\d)\d{6}(?!\d)", m["text"])
                if found:
                    return found.group()
        raise AssertionError(f"no code for {to}: {messages}")

    def last_text(self, to: str) -> str:
        return requests.get(f"{self.trifactor}/dev/outbox", params={"to": to.lstrip("+")}, timeout=5).json()["messages"][0]["text"]


def _start_bank(trifactor_port: int, tmp: Path, name: str, idle: str = "300", database_url: str = None):
    """trifactor-bank on a free port against trifactord at `trifactor_port`; its process and URL."""
    env = dict(os.environ, TRIFACTOR_BANK_TRIFACTOR_URL=f"http://127.0.0.1:{trifactor_port}", TRIFACTOR_BANK_LISTEN="127.0.0.1:0",
               TRIFACTOR_BANK_DEV="1", TRIFACTOR_BANK_DATABASE_URL=database_url or f"sqlite:{tmp / (name + '.db')}",
               TRIFACTOR_BANK_SECRET_FILE=str(tmp / (name + ".secret")), TRIFACTOR_BANK_IDLE_TIMEOUT=idle)
    process = subprocess.Popen([BANK], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    first = {}
    reader = threading.Thread(target=lambda: first.setdefault("line", process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(START_TIMEOUT)
    match = re.match(r"Trifactor Bank: (http://\S+)", first.get("line", ""))
    if not match:
        process.kill()
        pytest.fail(f"trifactor-bank did not start: {first.get('line')!r}", pytrace=False)
    return process, match.group(1).rstrip("/")


@pytest.fixture(scope="module")
def trifactord():
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-bank."))
    daemon = _Daemon(_binary(), ["--dev", "--listen", "127.0.0.1:0", "--database-url", f"sqlite:{tmp / 't.db'}",
                                 "--key-file", str(tmp / "k.key"), "--trusted-proxies", "127.0.0.1", "--brands", "Trifactor Bank",
                                 # One demo mobile for every customer: more texts than a real number's limits and budgets allow.
                                 "--verify-number-burst", "200", "--verify-budget-prefix", "1000/h,10000/d",
                                 # Every customer signs up from 127.0.0.1, and the unhappy paths type many wrong codes to that one mobile.
                                 "--signup-ip-burst", "200", "--verify-max-failures", "1000"], tmp / "trifactord")
    try:
        yield daemon.port, tmp, daemon
    finally:
        daemon.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _running_bank(trifactord, name, idle="300"):
    if not os.access(BANK, os.X_OK):
        pytest.fail(f"TRIFACTOR_BANK={BANK!r} is not an executable: `swift build --product trifactor-bank`", pytrace=False)
    port, tmp, _ = trifactord
    process, url = _start_bank(port, tmp, name, idle)
    try:
        yield Bank(port, url)
    finally:
        process.terminate()
        assert process.wait(timeout=15) == 0


@pytest.fixture(scope="module")
def bank(trifactord):
    yield from _running_bank(trifactord, "bank")


@pytest.fixture(scope="module")
def postgres_bank(trifactord):
    """The bank on PostgreSQL (the throwaway server `make test` starts), when there is one."""
    url = os.environ.get("TRIFACTOR_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("no PostgreSQL (run through scripts/with-postgres.sh, as make test does)")
    port, tmp, _ = trifactord
    process, bank_url = _start_bank(port, tmp, "pg", database_url=url)
    try:
        yield Bank(port, bank_url)
    finally:
        process.terminate()
        assert process.wait(timeout=15) == 0


@pytest.fixture(scope="module")
def hasty_bank(trifactord):
    """A second bank whose balances hide after 3 idle seconds."""
    yield from _running_bank(trifactord, "hasty", idle="3")


VIEWPORTS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 800}}
_current = {"viewport": "phone"}


@pytest.fixture(params=list(VIEWPORTS))
def viewport(request):
    """Each journey once on a phone (390×844) and once on a desktop (1280×800)."""
    _current["viewport"] = request.param
    try:
        yield request.param
    finally:
        _current["viewport"] = "phone"


def mail(name):
    """`name`'s address in this viewport's run: each run opens accounts of its own."""
    return f"{name}@example.com" if _current["viewport"] == "phone" else f"{name}-{_current['viewport']}@example.com"


@pytest.fixture
def phone(browser, viewport):
    """A page of this run's viewport (named for the phone it was first)."""
    context = browser.new_context(viewport=VIEWPORTS[viewport])
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        yield page
    finally:
        context.close()


def shot(page, name):
    """A screenshot of the whole page (`-desktop` in its name on the desktop run)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    suffix = "" if _current["viewport"] == "phone" else f"-{_current['viewport']}"
    page.screenshot(path=str(SHOTS / f"{name}{suffix}.png"), full_page=True)


def open_account(page, bank, email, picture="owl", phrase="night watch"):
    page.goto(bank.url + "/")
    page.get_by_role("link", name="Open an account").click()
    page.get_by_label("Full name").fill("Ann Example")
    page.get_by_label("Email").fill(email)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_label("Mobile number").fill(MOBILE)
    page.get_by_label(picture).check()
    page.get_by_label("Sitekey phrase").fill(phrase)
    page.get_by_role("button", name="Open my account").click()
    expect(page.get_by_role("heading", name="Check your email")).to_be_visible()
    page.get_by_label("Code").fill(bank.last_code(email))
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("heading", name="Confirm your mobile")).to_be_visible()
    page.get_by_label("Code").fill(bank.last_code(MOBILE, "sms"))
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("heading", name="Your accounts")).to_be_visible()


def transfer_form(page, iban, amount):
    """The transfer form from Checking to Alice Example at another bank, filled but not sent."""
    page.get_by_role("link", name="Make a transfer").click()
    checking = page.get_by_label("From").locator("option", has_text="Checking").get_attribute("value")
    page.get_by_label("From").select_option(value=checking)
    page.get_by_label("To", exact=True).select_option(label="A payee at another bank")
    page.get_by_label("Payee name").fill("Alice Example")
    page.get_by_label("Payee IBAN").fill(iban)
    page.get_by_label("Amount in EUR").fill(amount)


def approval_form(page, bank):
    """The texted code of the transfer on screen, and the approval form as the page would post it."""
    code = bank.last_code(MOBILE, "sms")
    return code, {"csrf": page.locator("input[name=csrf]").first.get_attribute("value"),
                  "transfer": page.locator("input[name=transfer]").first.get_attribute("value"), "code": code}


def enter_password(page, email, password=PASSWORD):
    """The first two steps of signing in: the email, then (under the sitekey) the password."""
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Continue").click()
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_open_an_account_then_sign_in_with_sitekey_and_sms(bank, phone):
    open_account(phone, bank, mail("ann"))
    expect(phone.get_by_text("EUR 2,500.00")).to_be_visible()
    expect(phone.get_by_text("EUR 10,000.00")).to_be_visible()
    phone.get_by_role("button", name="Sign out").click()
    expect(phone.get_by_text("You are signed out.")).to_be_visible()

    phone.get_by_label("Email").fill(mail("ann"))
    phone.get_by_role("button", name="Continue").click()
    expect(phone.get_by_role("img", name="Your picture: owl")).to_be_visible()
    shot(phone, "sign-in-sitekey")
    phone.get_by_label("Password").fill("not the password at all")
    phone.get_by_role("button", name="Sign in").click()
    expect(phone.get_by_role("alert")).to_contain_text("email or password is incorrect")
    phone.get_by_label("Password").fill(PASSWORD)
    phone.get_by_role("button", name="Sign in").click()
    expect(phone.get_by_role("heading", name="Confirm it's you")).to_be_visible()
    shot(phone, "second-factor-choice")
    phone.get_by_role("button", name=re.compile("Text me a code")).click()
    phone.get_by_label("Code").fill("000000")
    phone.get_by_role("button", name="Confirm").click()
    # A texted code stops working after three wrong tries: the page says how many this one has left.
    expect(phone.get_by_role("alert")).to_contain_text("That code is wrong. 2 more tries with this code, then send a new one.")
    phone.get_by_label("Code").fill(bank.last_code(MOBILE, "sms"))
    phone.get_by_role("button", name="Confirm").click()
    expect(phone.get_by_role("heading", name="Your accounts")).to_be_visible()

    phone.get_by_role("link", name="Checking").click()
    expect(phone.get_by_role("table")).to_contain_text("Opening balance")
    shot(phone, "statement")


NEW_BROWSER = "This browser is new to us: your picture and phrase appear here after you sign in on it once."


def new_context(browser):
    """Another browser: a context of its own (its own cookies), of this run's viewport."""
    context = browser.new_context(viewport=VIEWPORTS[_current["viewport"]])
    context.set_default_timeout(10_000)
    return context


def test_the_sitekey_shows_only_on_the_browser_the_customer_signed_in_with(bank, browser, viewport):
    mine, other = new_context(browser), new_context(browser)
    page = mine.new_page()
    open_account(page, bank, mail("kim"), picture="balloon", phrase="up and away")
    page.get_by_role("button", name="Sign out").click()
    # Signing out keeps the browser recognised: the customer's own picture and phrase.
    page.get_by_label("Email").fill(mail("kim"))
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("img", name="Your picture: balloon")).to_be_visible()
    expect(page.get_by_text("up and away")).to_be_visible()
    # The same browser with another address, and a fresh browser with the customer's or nobody's: one neutral page.
    fresh = other.new_page()
    for p, email in [(page, "nobody-here@example.com"), (fresh, mail("kim")), (fresh, "nobody-here@example.com")]:
        p.goto(bank.url + "/")
        p.get_by_label("Email").fill(email)
        p.get_by_role("button", name="Continue").click()
        expect(p.get_by_text(NEW_BROWSER)).to_be_visible()
        expect(p.get_by_role("img")).to_have_count(0)
        expect(p.get_by_text("up and away")).to_have_count(0)
    shot(fresh, "sign-in-new-browser")
    # Forgotten from the settings page, the browser is new again.
    page.goto(bank.url + "/")
    enter_password(page, mail("kim"))
    page.get_by_role("button", name=re.compile("Text me a code")).click()
    page.get_by_label("Code").fill(bank.last_code(MOBILE, "sms"))
    page.get_by_role("button", name="Confirm").click()
    page.get_by_role("link", name="Settings").click()
    page.get_by_role("button", name="Forget this browser").click()
    expect(page.get_by_text("This browser is forgotten")).to_be_visible()
    page.get_by_role("button", name="Sign out", exact=True).click()
    page.get_by_label("Email").fill(mail("kim"))
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_text(NEW_BROWSER)).to_be_visible()
    mine.close()
    other.close()


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_a_transfer_is_confirmed_by_a_code_that_names_it_and_moves_money_once(store, request, browser, viewport):
    bank = request.getfixturevalue("bank" if store == "sqlite" else "postgres_bank")
    context = browser.new_context(viewport=VIEWPORTS[viewport])
    page = context.new_page()
    page.set_default_timeout(10_000)
    open_account(page, bank, mail(f"bob-{store}"), picture="sun", phrase="bright morning")

    transfer_form(page, "DE89 3704 0044 0532 0130 01", "250.005")
    page.get_by_role("button", name="Review transfer").click()
    expect(page.get_by_text("That IBAN has a typo")).to_be_visible()
    expect(page.get_by_text("Use at most two decimals.")).to_be_visible()

    page.get_by_label("Payee IBAN").fill("DE89 3704 0044 0532 0130 00")
    for amount, sentence in [("-5", "Enter an amount above zero."), ("0", "Enter an amount above zero."), ("ten", "Enter an amount like 250"),
                             ("999999", "That is more than the EUR 2,500.00 in Checking.")]:
        page.get_by_label("Amount in EUR").fill(amount)
        page.get_by_role("button", name="Review transfer").click()
        expect(page.get_by_text(sentence)).to_be_visible()
    page.get_by_label("Amount in EUR").fill("250.00")
    # A reference with a long unbroken word (an order number pasted in) must not push a phone's statement sideways.
    page.get_by_label("Reference (optional)").fill("Invoice 2041-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345")
    page.get_by_role("button", name="Review transfer").click()
    expect(page.get_by_role("heading", name="Check your transfer")).to_be_visible()
    shot(page, "transfer-confirmation")
    page.get_by_role("button", name="Confirm transfer").click()
    expect(page.get_by_text("Confirm transfer of EUR 250.00 to Alice Example")).to_be_visible()
    text = bank.last_text(MOBILE)
    assert "250.00" in text and "Alice Example" in text, text
    # The text names the bank (the brand it forwards), not Trifactor's own name.
    assert "Trifactor Bank" in text, text
    code, form = approval_form(page, bank)
    page.get_by_label("Code").fill(code)
    page.get_by_role("button", name="Confirm and send").click()
    expect(page.get_by_text("Sent EUR 250.00 to Alice Example")).to_be_visible()
    expect(page.get_by_text("EUR 2,250.00")).to_be_visible()

    # The same form sent again by a script (a double submit's second request) moves nothing, and says it was sent once.
    again = page.request.post(bank.url + "/transfer/approve", form=form, max_redirects=0)
    assert again.status == 409 and "Nothing was moved" in again.text() and "Transfer sent" in again.text(), again.status
    # Back to the code page: it says the transfer was sent, and sends nothing again.
    page.go_back()
    expect(page.get_by_role("heading", name="Transfer sent")).to_be_visible()
    expect(page.get_by_text("opening this page again sends nothing")).to_be_visible()
    # A tampered transfer id is refused alike.
    forged = page.request.post(bank.url + "/transfer/approve", form={**form, "transfer": "0" * 36}, max_redirects=0)
    assert forged.status == 409 and "no longer waiting" in forged.text()
    page.goto(bank.url + "/accounts")
    expect(page.get_by_text("EUR 2,250.00")).to_be_visible()
    page.get_by_role("link", name="Checking").click()
    expect(page.get_by_role("table")).to_contain_text("To Alice Example")
    expect(page.get_by_role("table")).to_contain_text("Reference: Invoice 2041-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= VIEWPORTS[viewport]["width"], f"the statement is {width} px wide at {viewport}"
    shot(page, f"statement-after-transfer-{store}")
    context.close()


def test_a_post_without_the_right_csrf_token_is_refused_and_does_nothing(bank):
    session = requests.Session()
    home = session.get(bank.url + "/", timeout=5)
    assert "HttpOnly" in home.headers["Set-Cookie"] and "SameSite=Strict" in home.headers["Set-Cookie"]
    csp = home.headers["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    r = session.post(bank.url + "/signin", data={"email": mail("ann")}, timeout=5, allow_redirects=False)
    assert r.status_code == 403 and "Nothing was done" in r.text
    r = session.post(bank.url + "/signin", data={"email": mail("ann"), "csrf": "x" * 43}, timeout=5, allow_redirects=False)
    assert r.status_code == 403
    r = requests.post(bank.url + "/transfer", data={"amount": "1"}, timeout=5, allow_redirects=False)
    assert r.status_code == 403


def test_the_browsers_trace_reaches_trifactord_through_the_bank(bank, trifactord):
    """The bank passes the browser's W3C traceparent on (a span of its own): trifactord's log line joins the trace."""
    trace = secrets.token_hex(16)
    session = requests.Session()
    csrf = lambda html: re.search(r'name="csrf" value="([^"]+)"', html).group(1)
    home = session.get(bank.url + "/", timeout=5)
    step = session.post(bank.url + "/signin", data={"email": "traced@example.com", "csrf": csrf(home.text)}, timeout=5)
    header = f"00-{trace}-00f067aa0ba902b7-01"
    r = session.post(bank.url + "/signin/password", data={"password": "not-the-password-at-all", "csrf": csrf(step.text)},
                     headers={"traceparent": header}, timeout=10, allow_redirects=False)
    assert r.status_code == 303 and r.headers["Location"] == "/signin/password", r.status_code  # refused: back to the password page
    daemon = trifactord[2]

    def joined():
        with daemon.lock:
            return [json.loads(line) for line in daemon.lines if trace in line]
    wait_until(lambda: joined(), "trifactord's log line with the browser's trace id")
    line = joined()[0]
    assert line["path"] == "/v1/sessions" and line["status"] == 401 and line["trace_id"] == trace
    assert line["parent_id"] != "00f067aa0ba902b7", "the bank's own span is the parent of trifactord's"


def test_coming_back_after_the_idle_time_hides_balances_until_a_second_factor(hasty_bank, phone):
    open_account(phone, hasty_bank, mail("carol"), picture="moon", phrase="quiet night")
    expect(phone.get_by_text("EUR 2,500.00")).to_be_visible()
    # The page leaves by itself once the idle time has passed (its script), and the server agrees.
    expect(phone.get_by_role("heading", name="Welcome back")).to_be_visible(timeout=8_000)
    expect(phone.get_by_text("EUR 2,500.00")).to_have_count(0)
    phone.goto(hasty_bank.url + "/accounts")
    expect(phone.get_by_role("heading", name="Welcome back")).to_be_visible()
    phone.get_by_role("button", name=re.compile("A text message to")).click()
    phone.get_by_label("Code").fill(hasty_bank.last_code(MOBILE, "sms"))
    phone.get_by_role("button", name="Confirm").click()
    expect(phone.get_by_role("heading", name="Your accounts")).to_be_visible()
    expect(phone.get_by_text("EUR 2,500.00")).to_be_visible()


def test_a_sign_in_approved_on_the_customers_trifactor_device_by_typing_the_number_shown(bank, phone, tmp_path):
    import pexpect

    open_account(phone, bank, mail("dave"), picture="kite", phrase="windy hill")
    phone.get_by_role("button", name="Sign out").click()

    cli = os.environ.get("TRIFACTOR_CLI", ".build/debug/trifactor")
    passphrase = tmp_path / "passphrase"
    passphrase.write_text("a long vault passphrase\n")
    passphrase.chmod(0o600)
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), TRIFACTOR_SERVER=bank.trifactor,
               TRIFACTOR_VAULT_PASSPHRASE_FILE=str(passphrase), TERM="dumb")
    env.pop("XDG_RUNTIME_DIR", None)

    def run(*args, timeout=30):
        return pexpect.spawn(cli, list(args), env=env, encoding="utf-8", timeout=timeout)

    # The customer's laptop becomes their device: sign in there (password, texted code), then enroll it.
    login = run("login", mail("dave"))
    login.expect("Password: ")
    login.sendline(PASSWORD)
    login.expect("Code sent to")
    login.sendline(bank.last_code(MOBILE, "sms"))
    login.expect(rf"Signed in as {re.escape(mail('dave'))} \(AAL2")
    login.expect(pexpect.EOF)
    init = run("device", "init", "--name", "laptop")
    init.expect("This machine is device")
    init.expect(pexpect.EOF)

    # The bank in the browser: the device is one click away, and shows the number to pick.
    enter_password(phone, mail("dave"))
    phone.get_by_role("button", name=re.compile("Approve on my device")).click()
    expect(phone.get_by_role("heading", name="Approve on your device")).to_be_visible()
    number = phone.locator(".number").inner_text().strip()
    shot(phone, "push-number")

    # The device sees the browser (its address and user agent, forwarded by the bank) and the user types the number.
    approve = run("approve", "--once", timeout=40)
    approve.expect(r"Sign-in from 127\.0\.0\.1 with (.*)Chrome(.*), \d+ s left\.")
    approve.expect("Type the number shown on the sign-in screen")
    approve.sendline(number)
    approve.expect("Approved.")
    approve.expect(pexpect.EOF)

    expect(phone.get_by_role("heading", name="Your accounts")).to_be_visible(timeout=10_000)

    # Passwordless: the email only, then the device.
    phone.get_by_role("button", name="Sign out").click()
    phone.get_by_label("Email").fill(mail("dave"))
    phone.get_by_role("button", name="Sign in with my device, no password").click()
    number = phone.locator(".number").inner_text().strip()
    approve = run("approve", "--once", timeout=40)
    approve.expect("Type the number shown on the sign-in screen")
    approve.sendline(number)
    approve.expect("Approved.")
    approve.expect(pexpect.EOF)
    expect(phone.get_by_role("heading", name="Your accounts")).to_be_visible(timeout=10_000)

    # A forgotten password reset with the device: the new password, then the approval. A password refused after the
    # approval is typed again, and the same approval confirms it: no second push, no dead end.
    phone.get_by_role("button", name="Sign out").click()
    phone.goto(bank.url + "/forgot")
    phone.get_by_label("Email").fill(mail("dave"))
    phone.get_by_role("button", name="Email me a code").click()
    phone.get_by_label("Code from the email").fill(re.search(r"(?<!\d)\d{8}(?!\d)", _reset_email(bank, mail("dave"))).group())
    phone.get_by_role("button", name="Continue").click()
    phone.get_by_role("button", name=re.compile("Approve on my device")).click()
    phone.get_by_label("New password").fill("qwerty123")
    phone.get_by_role("button", name="Continue and approve on my device").click()
    expect(phone.get_by_role("heading", name="Approve on your device")).to_be_visible()
    number = phone.locator(".number").inner_text().strip()
    approve = run("approve", "--once", timeout=40)
    approve.expect("Type the number shown on the sign-in screen")
    approve.sendline(number)
    approve.expect("Approved.")
    approve.expect(pexpect.EOF)
    expect(phone.locator("#f-new_password-error")).to_contain_text("This password is too common", timeout=10_000)
    phone.get_by_label("New password").fill("kites over windy hills")
    phone.get_by_role("button", name="Continue and approve on my device").click()
    expect(phone.get_by_role("status")).to_contain_text("Your password is changed")
    phone.get_by_label("Password").fill("kites over windy hills")
    phone.get_by_role("button", name="Sign in").click()
    expect(phone.get_by_role("heading", name="Confirm it's you")).to_be_visible()


def test_settings_add_an_authenticator_app_after_confirming_make_recovery_codes_and_use_both(bank, phone):
    import pyotp

    open_account(phone, bank, mail("erin"), picture="tree", phrase="green shade")
    phone.get_by_role("link", name="Settings").click()
    expect(phone.get_by_role("heading", name="Where you are signed in")).to_be_visible()
    # The browser as a person reads it (trifactord's device name from the user agent the bank forwards).
    expect(phone.get_by_role("listitem").filter(has_text=re.compile(r"Chrom\w* on Linux"))).to_have_count(1)
    phone.get_by_role("button", name="Add an authenticator app").click()
    # Adding a factor needs a fresh second factor: the page says why it asks, then goes on to the app.
    if phone.get_by_role("heading", name="Confirm it's you to add an authenticator app").is_visible():
        phone.get_by_role("button", name=re.compile("A text message to")).click()
        phone.get_by_label("Code").fill(bank.last_code(MOBILE, "sms"))
        phone.get_by_role("button", name="Confirm").click()
    expect(phone.get_by_role("img", name="QR code for your authenticator app")).to_be_visible()
    secret = phone.locator("main code").inner_text().replace(" ", "")
    totp = pyotp.TOTP(secret)
    phone.get_by_label("Code from the app").fill("000000" if totp.now() != "000000" else "111111")
    phone.get_by_role("button", name="Add the app").click()
    expect(phone.get_by_role("alert")).to_contain_text("That code is wrong")
    phone.get_by_label("Code from the app").fill(totp.now())
    phone.get_by_role("button", name="Add the app").click()
    expect(phone.get_by_text("Your authenticator app is added.")).to_be_visible()
    # Two factors, two rename forms: each input has its own id, so each label names its own field.
    ids = phone.locator("form.rename input[name=name]").evaluate_all("inputs => inputs.map(i => i.id)")
    assert len(ids) == 2 and len(set(ids)) == 2, ids
    for label in phone.locator("form.rename label").all():
        assert phone.locator(f"#{label.get_attribute('for')}").count() == 1

    phone.get_by_role("button", name="Make new recovery codes").click()
    codes = [c.inner_text() for c in phone.locator("ol.codes code").all()]
    assert len(codes) == 10 and all(re.fullmatch(r"[A-Z0-9]{5}-[A-Z0-9]{5}", c) for c in codes), codes
    shot(phone, "recovery-codes")

    def sign_in_with(button, code):
        phone.get_by_role("button", name="Sign out").click()
        enter_password(phone, mail("erin"))
        phone.get_by_role("button", name=button).click()
        phone.get_by_label(re.compile("code", re.I)).fill(code)
        phone.get_by_role("button", name="Confirm").click()
        expect(phone.get_by_role("heading", name="Your accounts")).to_be_visible()

    import time
    time.sleep(max(0, 31 - (time.time() % 30)))  # a fresh time step: a TOTP code works once
    sign_in_with("Use my authenticator app", totp.now())
    sign_in_with("Use a recovery code", codes[0])
    # Settings count what is left of the set.
    phone.get_by_role("link", name="Settings").click()
    expect(phone.get_by_text(re.compile(r"^9 recovery codes are left \(made on .*, last used on "))).to_be_visible()


def test_call_me_instead_speaks_the_same_code(bank, phone):
    from conftest import voice_code

    open_account(phone, bank, mail("frank"), picture="cup", phrase="morning tea")
    phone.get_by_role("button", name="Sign out").click()
    enter_password(phone, mail("frank"))
    phone.get_by_role("button", name=re.compile("Text me a code")).click()
    texted = bank.last_code(MOBILE, "sms")
    phone.get_by_role("button", name="Call me instead").click()
    expect(phone.get_by_role("status")).to_contain_text("We are calling")
    messages = requests.get(f"{bank.trifactor}/dev/outbox", params={"to": MOBILE.lstrip("+")}, timeout=5).json()["messages"]
    spoken = voice_code(next(m["text"] for m in messages if m["channel"] == "voice"))
    assert spoken == texted
    phone.get_by_label("Code").fill(spoken)
    phone.get_by_role("button", name="Confirm").click()
    expect(phone.get_by_role("heading", name="Your accounts")).to_be_visible()


def test_a_passkey_added_in_settings_is_the_second_factor_and_signs_in_alone(bank, browser, viewport):
    # WebAuthn needs a domain: the bank as http://localhost:PORT (trifactord's dev mode allows that origin, rp id localhost).
    url = bank.url.replace("127.0.0.1", "localhost")
    local = Bank(int(bank.trifactor.rsplit(":", 1)[1]), url)
    context = browser.new_context(viewport=VIEWPORTS[viewport])
    page = context.new_page()
    page.set_default_timeout(10_000)
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    authenticator = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True}})["authenticatorId"]

    open_account(page, local, mail("grace"), picture="compass", phrase="true north")
    page.get_by_role("link", name="Settings").click()
    page.get_by_role("button", name=re.compile("Add a passkey")).click()
    # A fresh second factor first (a texted code), then back to settings to add it.
    expect(page.get_by_role("heading", name="Confirm it's you to add a passkey")).to_be_visible()
    page.get_by_role("button", name=re.compile("A text message to")).click()
    page.get_by_label("Code").fill(local.last_code(MOBILE, "sms"))
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("heading", name="Settings")).to_be_visible()
    page.get_by_role("button", name=re.compile("Add a passkey")).click()
    expect(page.get_by_text("Your passkey is added")).to_be_visible()
    assert len(cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})["credentials"]) == 1
    page.get_by_label("New name for Passkey").fill("Work laptop")
    page.locator("form", has=page.get_by_label("New name for Passkey")).get_by_role("button", name="Rename").click()
    expect(page.get_by_text("Renamed to Work laptop.")).to_be_visible()

    # The passkey as second factor: password, then Touch ID / Face ID.
    page.get_by_role("button", name="Sign out", exact=True).click()
    enter_password(page, mail("grace"))
    page.get_by_role("button", name="Use Touch ID / Face ID / your security key").click()
    expect(page.get_by_role("heading", name="Your accounts")).to_be_visible()

    # Alone: no email, no password.
    page.get_by_role("button", name="Sign out", exact=True).click()
    page.get_by_role("button", name="Sign in with a passkey").click()
    expect(page.get_by_role("heading", name="Your accounts")).to_be_visible()
    expect(page.get_by_text("EUR 2,500.00")).to_be_visible()

    # A transfer between the customer's own accounts, signed by the passkey over the action's hash.
    page.get_by_role("link", name="Make a transfer").click()
    checking = page.get_by_label("From").locator("option", has_text="Checking").get_attribute("value")
    saving = page.get_by_label("To", exact=True).locator("option", has_text="Saving").get_attribute("value")
    page.get_by_label("From").select_option(value=checking)
    page.get_by_label("To", exact=True).select_option(value=saving)
    page.get_by_label("Amount in EUR").fill("100")
    page.get_by_role("button", name="Review transfer").click()
    page.get_by_role("group", name="Confirm with").get_by_label("My passkey").check()
    page.get_by_role("button", name="Confirm transfer").click()
    expect(page.get_by_text("Confirm transfer of EUR 100.00 to your saving account")).to_be_visible()
    page.get_by_role("button", name="Confirm with Touch ID / Face ID / your security key").click()
    expect(page.get_by_text("Sent EUR 100.00 to your saving account.")).to_be_visible()
    expect(page.get_by_text("EUR 2,400.00")).to_be_visible()
    expect(page.get_by_text("EUR 10,100.00")).to_be_visible()

    # A passkey that no longer verifies the user is refused, and the page says so.
    page.get_by_role("button", name="Sign out", exact=True).click()
    cdp.send("WebAuthn.setUserVerified", {"authenticatorId": authenticator, "isUserVerified": False})
    page.get_by_role("button", name="Sign in with a passkey").click()
    # The browser refuses it (no user verification): the page says the passkey check failed, never "email or password".
    expect(page.get_by_role("alert")).to_contain_text("passkey check was cancelled, timed out, or not accepted")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()

    # A forgotten password is reset with the emailed code and the passkey: the new password first, then Touch ID.
    cdp.send("WebAuthn.setUserVerified", {"authenticatorId": authenticator, "isUserVerified": True})
    page.goto(url + "/forgot")
    page.get_by_label("Email").fill(mail("grace"))
    page.get_by_role("button", name="Email me a code").click()
    page.get_by_label("Code from the email").fill(re.search(r"(?<!\d)\d{8}(?!\d)", _reset_email(local, mail("grace"))).group())
    page.get_by_role("button", name="Continue").click()
    page.get_by_role("button", name="Use Touch ID / Face ID / your security key").click()
    expect(page.get_by_role("heading", name="Choose a new password")).to_be_visible()
    page.get_by_label("New password").fill("north by north west")
    page.get_by_role("button", name="Continue").click()
    expect(page.get_by_role("heading", name="Confirm with your passkey")).to_be_visible()
    page.get_by_role("button", name="Confirm with Touch ID / Face ID / your security key").click()
    expect(page.get_by_role("status")).to_contain_text("Your password is changed")
    enter_password_here = page.get_by_label("Password")
    enter_password_here.fill("north by north west")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Confirm it's you")).to_be_visible()
    context.close()


def _reset_email(bank, email):
    """The text of the password-reset email to `email` (queued a moment after the request)."""
    import time
    deadline = time.time() + 15
    while time.time() < deadline:
        for m in requests.get(f"{bank.trifactor}/dev/outbox", params={"to": email}, timeout=5).json()["messages"]:
            if re.search(r"(?<!\d)\d{8}(?!\d)", m["text"]):
                return m["text"]
        time.sleep(0.2)
    raise AssertionError(f"no reset email for {email}")


def test_changing_the_password_asks_for_a_second_factor_again_and_the_old_one_stops_working(bank, phone):
    open_account(phone, bank, mail("heidi"), picture="anchor", phrase="safe harbour")
    phone.get_by_role("link", name="Settings").click()

    def change(current, new):
        phone.get_by_label("Current password").fill(current)
        phone.get_by_label("New password").fill(new)
        phone.get_by_role("button", name="Change password").click()

    change(PASSWORD, "a whole new passphrase 9")
    # A fresh second factor first, then the form again.
    expect(phone.get_by_role("heading", name="Confirm it's you to change your password")).to_be_visible()
    phone.get_by_role("button", name=re.compile("A text message to")).click()
    phone.get_by_label("Code").fill(bank.last_code(MOBILE, "sms"))
    phone.get_by_role("button", name="Confirm").click()
    expect(phone.get_by_role("heading", name="Settings")).to_be_visible()
    change("not the password", "a whole new passphrase 9")
    expect(phone.get_by_role("status")).to_contain_text("Current password is not your current password.")
    change(PASSWORD, "password")
    expect(phone.get_by_role("status")).to_contain_text("New password")
    change(PASSWORD, "a whole new passphrase 9")
    expect(phone.get_by_role("status")).to_contain_text("Your password is changed")

    phone.get_by_role("button", name="Sign out", exact=True).click()
    enter_password(phone, mail("heidi"))
    expect(phone.get_by_role("alert")).to_contain_text("email or password is incorrect")
    phone.get_by_label("Password").fill("a whole new passphrase 9")
    phone.get_by_role("button", name="Sign in").click()
    expect(phone.get_by_role("heading", name="Confirm it's you")).to_be_visible()


def test_a_customer_without_a_second_factor_adds_one_before_seeing_any_balance(bank, phone):
    open_account(phone, bank, mail("ivan"), picture="cat", phrase="sleepy whiskers")
    phone.get_by_role("link", name="Settings").click()
    phone.get_by_role("link", name="Remove Mobile").click()
    # The last second factor: the page asks first, saying that two-step verification turns off.
    expect(phone.get_by_role("heading", name="Remove Mobile?")).to_be_visible()
    expect(phone.get_by_text("Two-step verification turns off.")).to_be_visible()
    phone.get_by_role("button", name="Remove Mobile and turn off two-step verification").click()
    expect(phone.get_by_role("heading", name="Confirm it's you to remove Mobile")).to_be_visible()
    phone.get_by_role("button", name=re.compile("A text message to")).click()
    phone.get_by_label("Code").fill(bank.last_code(MOBILE, "sms"))
    phone.get_by_role("button", name="Confirm").click()
    # Removed once confirmed: balances hide until a second step is added again.
    expect(phone.get_by_role("status")).to_contain_text("Removed Mobile. Two-step verification is off")
    expect(phone.get_by_role("heading", name="Add two-step verification")).to_be_visible()

    phone.get_by_role("button", name="Sign out", exact=True).click()
    enter_password(phone, mail("ivan"))
    expect(phone.get_by_role("heading", name="Add two-step verification")).to_be_visible()
    phone.goto(bank.url + "/accounts")
    expect(phone.get_by_role("heading", name="Add two-step verification")).to_be_visible()
    expect(phone.get_by_text("EUR 2,500.00")).to_have_count(0)
    phone.get_by_role("button", name="Send me a code").click()
    phone.get_by_label("Code").fill(bank.last_code(MOBILE, "sms"))
    phone.get_by_role("button", name="Confirm").click()
    expect(phone.get_by_text("Two-step verification is on.")).to_be_visible()
    expect(phone.get_by_text("EUR 2,500.00")).to_be_visible()



def test_the_sign_in_page_is_usable_by_keyboard_in_reading_order(bank, phone):
    phone.goto(bank.url + "/")
    expect(phone.get_by_label("Email")).to_be_focused()  # autofocus
    order = []
    for _ in range(4):
        phone.keyboard.press("Tab")
        order.append(phone.evaluate("document.activeElement.textContent.trim()"))
    assert order == ["Continue", "Sign in with my device, no password", "Sign in with a passkey", "Open an account"], order
    # A refused password is announced next to its field, which it describes.
    enter_password(phone, "nobody@example.com", "wrong password here")
    alert = phone.get_by_role("alert")
    expect(alert).to_contain_text("incorrect")
    assert phone.get_by_label("Password").get_attribute("aria-describedby") == alert.get_attribute("id")
    assert phone.get_by_label("Password").get_attribute("aria-invalid") == "true"


def test_a_tab_hidden_longer_than_the_idle_time_hides_balances_when_it_comes_back(hasty_bank, phone):
    # The page's clock is ours: its idle timer never fires here, only the visibility rule can act.
    phone.clock.install()
    open_account(phone, hasty_bank, mail("judy"), picture="sailboat", phrase="open water")
    phone.goto(hasty_bank.url + "/accounts")
    expect(phone.get_by_text("EUR 2,500.00")).to_be_visible()
    hide = """hidden => { Object.defineProperty(document, 'hidden', {value: hidden, configurable: true});
                         document.dispatchEvent(new Event('visibilitychange')); }"""
    phone.evaluate(hide, True)
    # Hidden, the balances blur at once (the app switcher's snapshot shows none), not only after the idle time.
    expect(phone.locator("body")).to_have_class(re.compile(r"\bveiled\b"))
    assert "blur" in phone.get_by_text("EUR 2,500.00").evaluate("e => getComputedStyle(e).filter")
    phone.clock.set_system_time(phone.evaluate("Date.now()") + 10_000)  # ten seconds away, no timer run
    phone.evaluate(hide, False)
    expect(phone.get_by_role("heading", name="Welcome back")).to_be_visible()
    expect(phone.get_by_text("EUR 2,500.00")).to_have_count(0)


SIGNED_OUT_ELSEWHERE = "You were signed out, perhaps from another device. Please sign in again."
SESSION_CHECK = 2.5  # a little over the bank's check interval (2 s): the longest a page may lag behind Trifactor


def sign_in_with_text(page, bank, email, password=PASSWORD):
    page.goto(bank.url + "/")
    enter_password(page, email, password)
    page.get_by_role("button", name=re.compile("Text me a code")).click()
    page.get_by_label("Code").fill(bank.last_code(MOBILE, "sms"))
    page.get_by_role("button", name="Confirm").click()
    expect(page.get_by_role("heading", name="Your accounts")).to_be_visible()


def expect_signed_out_elsewhere(page):
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_role("status")).to_have_text(SIGNED_OUT_ELSEWHERE)


def test_signing_out_elsewhere_or_changing_the_password_signs_the_other_browser_out_of_the_bank(bank, browser, viewport):
    import time

    a, b = new_context(browser), new_context(browser)
    first, second = a.new_page(), b.new_page()
    open_account(first, bank, mail("lena"), picture="mountain", phrase="high pass")

    # "Sign out everywhere else" in A: B's statement sends it to sign in again.
    sign_in_with_text(second, bank, mail("lena"))
    second.get_by_role("link", name="Checking").click()
    expect(second.get_by_role("table")).to_contain_text("Opening balance")
    first.get_by_role("link", name="Settings").click()
    first.get_by_role("button", name="Sign out everywhere else").click()
    expect(first.get_by_text("You are signed out everywhere else.")).to_be_visible()
    time.sleep(SESSION_CHECK)
    second.reload()
    expect_signed_out_elsewhere(second)
    shot(second, "signed-out-elsewhere")
    second.goto(bank.url + "/accounts")
    expect(second.get_by_role("heading", name="Sign in")).to_be_visible()

    # B's session signed out from A's list: B's settings page and accounts send it to sign in again.
    sign_in_with_text(second, bank, mail("lena"))
    first.reload()
    first.get_by_role("button", name="Sign out this session").click()
    expect(first.get_by_text("That session is signed out.")).to_be_visible()
    second.get_by_role("link", name="Settings").click()
    expect_signed_out_elsewhere(second)

    # A password change in A: B's transfer review sends it to sign in again, never a 500.
    sign_in_with_text(second, bank, mail("lena"))
    transfer_form(second, "DE89 3704 0044 0532 0130 00", "10")
    first.reload()
    first.get_by_label("Current password").fill(PASSWORD)
    first.get_by_label("New password").fill("a whole new passphrase 9")
    first.get_by_role("button", name="Change password").click()
    step_up = first.get_by_role("heading", name="Confirm it's you to change your password")
    expect(first.get_by_role("status").or_(step_up).first).to_be_visible()
    if step_up.is_visible():
        first.get_by_role("button", name=re.compile("A text message to")).click()
        first.get_by_label("Code").fill(bank.last_code(MOBILE, "sms"))
        first.get_by_role("button", name="Confirm").click()
        expect(first.get_by_role("heading", name="Settings")).to_be_visible()
        first.get_by_label("Current password").fill(PASSWORD)
        first.get_by_label("New password").fill("a whole new passphrase 9")
        first.get_by_role("button", name="Change password").click()
    expect(first.get_by_role("status")).to_contain_text("Your password is changed")
    time.sleep(SESSION_CHECK)
    second.get_by_role("button", name="Review transfer").click()
    expect_signed_out_elsewhere(second)
    # A is still signed in.
    first.get_by_role("link", name="Accounts").click()
    expect(first.get_by_text("EUR 2,500.00")).to_be_visible()
    a.close()
    b.close()
