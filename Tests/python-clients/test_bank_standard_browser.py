"""Trifactor Bank on the standard path, in Chromium: the bank is a FAPI 2.0 client of trifactord's
OpenID Provider (pushed requests, PKCE, private_key_jwt, DPoP-bound tokens held by the bank's
server). Its customers sign in on Trifactor's hosted pages and approve each transfer there as a
payment (RFC 9396 details, a text naming amount and payee); the bank spends the approval once
before its ledger moves. Fields are found by their labels and buttons by their names; codes are
read from the dev phone; a transfer is also approved on the customer's device (the `trifactor` CLI in a
pseudo-terminal). Screenshots go to $BANK_SCREENSHOTS (default .build/bank-screenshots)."""

import os
import re
import secrets
import subprocess
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pexpect
import pytest
import requests
from playwright.sync_api import expect

from conftest import START_TIMEOUT, free_port, wait_until
from oidc_support import Provider
from test_bank_browser import BANK, MOBILE, PASSWORD, Bank, open_account, shot
from test_oidc_ciba import Device

IBAN = "DE89 3704 0044 0532 0130 00"


class StandardBank(Bank):
    def __init__(self, op, url, process):
        super().__init__(op.port, url)
        self.op = op
        self.process = process


def start_standard_bank(op, tmp: Path, name: str, database_url=None):
    """trifactor-bank on the standard path: its key made, its client registered with trifactord, then started."""
    port = free_port()
    # The bank at localhost, Trifactor at 127.0.0.1: two sites, as a bank and its identity provider are, so the
    # callback arrives without the bank's SameSite=Strict cookie and must find its way back to the session.
    url = f"http://localhost:{port}"
    key = tmp / f"{name}-client.key"
    env = dict(os.environ, TRIFACTOR_BANK_CLIENT_KEY=str(key))
    jwks = subprocess.run([BANK, "jwks"], env=env, capture_output=True, text=True, check=True).stdout
    (tmp / f"{name}.jwks.json").write_text(jwks)
    client_id = f"bank-{name}-{secrets.token_hex(3)}"
    op.cli("clients", "create", "--id", client_id, "--name", "Trifactor Bank", "--fapi2", "--first-party", "--profile-in-id-token",
           "--auth-method", "private_key_jwt", "--jwks-file", str(tmp / f"{name}.jwks.json"),
           "--scopes", "openid email", "--redirect-uris", f"{url}/signin/callback",
           "--grants", "authorization_code urn:openid:params:grant-type:ciba", "--ciba", "poll",
           "--post-logout-uris", f"{url}/?signed_out=1",
           "--backchannel-logout-uri", f"http://127.0.0.1:{port}/backchannel-logout")
    env.update(TRIFACTOR_BANK_TRIFACTOR_URL=op.issuer, TRIFACTOR_BANK_LISTEN=f"127.0.0.1:{port}",
               TRIFACTOR_BANK_DEV="1", TRIFACTOR_BANK_DATABASE_URL=database_url or f"sqlite:{tmp / (name + '.db')}",
               TRIFACTOR_BANK_SECRET_FILE=str(tmp / (name + ".secret")), TRIFACTOR_BANK_CLIENT_ID=client_id,
               TRIFACTOR_BANK_DPOP_KEY=str(tmp / f"{name}-dpop.key"),
               TRIFACTOR_BANK_REDIRECT_URIS=f"{url}/signin/callback")
    log = open(tmp / f"{name}.log", "w")
    process = subprocess.Popen([BANK], env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    first = {}
    reader = threading.Thread(target=lambda: first.setdefault("line", process.stdout.readline()), daemon=True)
    reader.start()
    reader.join(START_TIMEOUT)
    if not first.get("line", "").startswith("Trifactor Bank:"):
        process.kill()
        pytest.fail(f"trifactor-bank did not start: {first.get('line')!r}", pytrace=False)
    bank = StandardBank(op, url, process)
    bank.env = env
    return bank


def stop(bank):
    bank.process.terminate()
    assert bank.process.wait(timeout=15) == 0


@pytest.fixture(scope="module")
def op(tmp_path_factory):
    if not os.access(BANK, os.X_OK):
        pytest.fail(f"TRIFACTOR_BANK={BANK!r} is not an executable: `swift build --product trifactor-bank`",
                    pytrace=False)
    provider = Provider(tmp_path_factory.mktemp("standard-bank"), extra_args=[
        "--trusted-proxies", "127.0.0.1", "--brands", "Trifactor Bank",
        "--verify-number-burst", "200", "--verify-budget-prefix", "1000/h,10000/d", "--verify-max-failures", "1000"])
    try:
        yield provider
    finally:
        provider.close()


@pytest.fixture(scope="module")
def bank(op, tmp_path_factory):
    b = start_standard_bank(op, tmp_path_factory.mktemp("bank"), "bank")
    try:
        yield b
    finally:
        stop(b)


@pytest.fixture
def phone(browser):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        yield page
    finally:
        context.close()


def customer(page, bank):
    """A customer who opened an account (the bank's own opening pages) and signed out again."""
    email = f"std-{secrets.token_hex(4)}@example.com"
    open_account(page, bank, email)
    page.get_by_role("button", name="Sign out").first.click()
    return email


def texted_code(bank, seen):
    """The newest text to the demo mobile not among `seen`: its code and its words."""
    def fresh():
        return [m for m in bank.op.srv.outbox(MOBILE.lstrip("+")) if m["id"] not in seen and m["channel"] == "sms"]
    wait_until(lambda: fresh(), "a text to the mobile")
    text = fresh()[0]["text"]
    return re.search(r"(?<!\d)\d{6}(?!\d)", text).group(), text


def seen_texts(bank):
    return {m["id"] for m in bank.op.srv.outbox(MOBILE.lstrip("+"))}


def sign_in_at_trifactor(page, bank, email):
    """From the bank's start page through Trifactor's hosted sign-in (password, then a texted code) and back."""
    page.goto(bank.url + "/")
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Sign in with Trifactor").click()
    expect(page).to_have_url(re.compile(re.escape(bank.op.issuer)))
    if page.get_by_label("Email").count():
        page.get_by_label("Email").fill(email)
        page.get_by_role("button", name="Continue").click()
    page.get_by_label("Password").fill(PASSWORD)
    seen = seen_texts(bank)
    page.get_by_role("button", name="Sign in").click()
    if page.get_by_role("button", name=re.compile("Text")).count():
        page.get_by_role("button", name=re.compile("Text")).first.click()
    code, _ = texted_code(bank, seen)
    page.get_by_label(re.compile("Code")).fill(code)
    page.get_by_role("button", name=re.compile("Sign in|Continue|Verify")).first.click()
    expect(page.get_by_role("heading", name="Your accounts")).to_be_visible()


def balance(page, bank, name="Checking"):
    page.goto(bank.url + "/accounts")
    card = page.locator(".card", has_text=name).first
    return card.inner_text()


def review_transfer(page, amount="25.00"):
    page.get_by_role("link", name="Make a transfer").first.click()
    page.get_by_label("To", exact=True).select_option(label="A payee at another bank")
    page.get_by_label("Payee name").fill("Erika Mustermann")
    page.get_by_label("Payee IBAN").fill(IBAN)
    page.get_by_label("Amount in EUR").fill(amount)
    page.get_by_role("button", name="Review transfer").click()
    expect(page.get_by_role("heading", name="Check your transfer")).to_be_visible()


def to_payment_page(page, bank):
    page.get_by_role("button", name="Approve at Trifactor").click()
    expect(page).to_have_url(re.compile(re.escape(bank.op.issuer)))
    expect(page.get_by_role("heading", name="Approve this payment")).to_be_visible()


def test_a_customer_signs_in_on_trifactors_pages_and_pays_with_a_text_naming_the_payment(bank, phone):
    email = customer(phone, bank)
    sign_in_at_trifactor(phone, bank, email)
    shot(phone, "standard-accounts")
    before = balance(phone, bank)
    review_transfer(phone, "25.00")
    to_payment_page(phone, bank)
    # Trifactor's page states the payment: amount, payee, IBAN.
    main = phone.locator("main").inner_text()
    assert "Erika Mustermann" in main and "25.00" in main, main
    shot(phone, "standard-payment-approval")
    seen = seen_texts(bank)
    phone.get_by_role("button", name=re.compile("Text me")).click()
    code, text = texted_code(bank, seen)
    assert "25.00" in text and "Erika Mustermann" in text, text
    phone.get_by_label(re.compile("Code")).fill(code)
    phone.get_by_role("button", name=re.compile("Approve")).click()
    expect(phone.get_by_text("Sent EUR 25.00 to Erika Mustermann")).to_be_visible()
    assert balance(phone, bank) != before
    # A second transfer is approved and moves too (each approval is its own).
    review_transfer(phone, "5.00")
    to_payment_page(phone, bank)
    seen = seen_texts(bank)
    phone.get_by_role("button", name=re.compile("Text me")).click()
    code, _ = texted_code(bank, seen)
    phone.get_by_label(re.compile("Code")).fill(code)
    phone.get_by_role("button", name=re.compile("Approve")).click()
    expect(phone.get_by_text("Sent EUR 5.00 to Erika Mustermann")).to_be_visible()
    # Back to the payment page and forward again moves nothing twice.
    phone.go_back()
    phone.go_back()
    phone.goto(bank.url + "/accounts")
    statement = phone.get_by_role("link", name=re.compile("Checking")).first
    statement.click()
    assert phone.locator("main").inner_text().count("Erika Mustermann") == 2


def test_a_transfer_between_own_accounts_names_the_account_chosen_on_trifactors_page(bank, phone):
    email = customer(phone, bank)
    sign_in_at_trifactor(phone, bank, email)
    phone.get_by_role("link", name="Make a transfer").first.click()
    phone.get_by_label("To", exact=True).select_option(label="Saving")
    phone.get_by_label("Amount in EUR").fill("15.00")
    phone.get_by_role("button", name="Review transfer").click()
    expect(phone.get_by_role("heading", name="Check your transfer")).to_be_visible()
    to_payment_page(phone, bank)
    # The payee is the customer's own Saving account, as the bank's review said, not only their name.
    payee = phone.locator("dl.summary dd").nth(1).inner_text()
    assert payee.endswith("(Saving)"), payee
    phone.get_by_role("button", name=re.compile("Cancel")).click()
    expect(phone.get_by_text("Nothing was moved")).to_be_visible()


def test_a_declined_payment_moves_nothing_and_the_transfer_waits(bank, phone):
    email = customer(phone, bank)
    sign_in_at_trifactor(phone, bank, email)
    before = balance(phone, bank)
    review_transfer(phone, "12.00")
    to_payment_page(phone, bank)
    phone.get_by_role("button", name=re.compile("Cancel|Decline|Do not")).first.click()
    expect(phone.get_by_text("The transfer was not approved. Nothing was moved.")).to_be_visible()
    expect(phone.get_by_role("heading", name="Check your transfer")).to_be_visible()
    assert balance(phone, bank) == before


def race_callback(page, bank, amount):
    """Approves a transfer but stops the browser at the bank's callback; the callback URL and the cookies."""
    review_transfer(page, amount)
    to_payment_page(page, bank)
    caught = {}
    approve = re.compile(re.escape(bank.op.issuer) + r"/authorize/payment(\?.*)?$")

    def hold(route):
        # Trifactor's answer to the approval is a redirect to the bank's callback: kept, not followed.
        if route.request.method != "POST":
            return route.continue_()
        response = route.fetch(max_redirects=0)
        caught["url"] = response.headers.get("location")
        route.fulfill(status=200, body="held", content_type="text/plain")

    seen = seen_texts(bank)
    page.get_by_role("button", name=re.compile("Text me")).click()
    code, _ = texted_code(bank, seen)
    page.route(approve, hold)
    page.get_by_label(re.compile("Code")).fill(code)
    page.get_by_role("button", name=re.compile("Approve")).click()
    wait_until(lambda: caught.get("url"), "the callback")
    page.unroute(approve)
    assert caught["url"].startswith(bank.url + "/signin/callback?"), caught
    cookies = {c["name"]: c["value"] for c in page.context.cookies(bank.url)}
    return caught["url"], cookies


def twenty_callbacks(url, cookies):
    def one(_):
        return requests.get(url, cookies=cookies, allow_redirects=False, timeout=20)
    with ThreadPoolExecutor(max_workers=20) as pool:
        return list(pool.map(one, range(20)))


def statement_lines(page, bank, payee="Erika Mustermann"):
    page.goto(bank.url + "/accounts")
    page.get_by_role("link", name=re.compile("Checking")).first.click()
    return page.locator("main").inner_text().count(payee)


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_twenty_racing_callbacks_of_one_approval_move_the_money_once(op, tmp_path, browser, store):
    database_url = None
    if store == "postgres":
        url = os.environ.get("TRIFACTOR_TEST_POSTGRES_URL")
        if not url:
            pytest.skip("no PostgreSQL (run through scripts/with-postgres.sh, as make test does)")
        name = f"bank_{secrets.token_hex(4)}"
        subprocess.run(["psql", url, "-q", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
        database_url = url.rsplit("/", 1)[0] + "/" + name
    bank = start_standard_bank(op, tmp_path, f"race{store}", database_url=database_url)
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        email = customer(page, bank)
        sign_in_at_trifactor(page, bank, email)
        url, cookies = race_callback(page, bank, "7.00")
        answers = twenty_callbacks(url, cookies)
        assert all(r.status_code in (303, 409) for r in answers), [r.status_code for r in answers]
        assert statement_lines(page, bank) == 1
    finally:
        context.close()
        stop(bank)


def test_signing_out_at_trifactor_ends_the_banks_session_and_the_banks_sign_out_ends_trifactors(bank, browser):
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(10_000)
    try:
        email = customer(page, bank)
        sign_in_at_trifactor(page, bank, email)
        # Signing out at the bank goes through Trifactor's end-session and comes back signed out of both.
        page.get_by_role("button", name="Sign out").first.click()
        if page.url.startswith(bank.op.issuer):
            page.get_by_role("button", name=re.compile("Sign out")).first.click()
        expect(page.get_by_text("You are signed out.")).to_be_visible()
        page.goto(bank.url + "/accounts")
        expect(page.get_by_role("button", name="Sign in with Trifactor")).to_be_visible()
        # Signed in again, then signed out at Trifactor (another tab): the bank hears it and ends its session.
        sign_in_at_trifactor(page, bank, email)
        other = context.new_page()
        other.goto(bank.op.issuer + "/logout")
        other.get_by_role("button", name=re.compile("Sign out")).first.click()
        wait_until(lambda: requests.get(bank.url + "/accounts", cookies={c["name"]: c["value"] for c in
                                                                          context.cookies(bank.url)},
                                        allow_redirects=False, timeout=5).headers.get("location") == "/?continue=1",
                   "the bank's session to end")
        page.reload()
        expect(page.get_by_role("button", name="Sign in with Trifactor")).to_be_visible()
        expect(page.get_by_text("Your session has ended. Please sign in again.")).to_be_visible()
    finally:
        context.close()


def test_settings_say_where_sign_in_methods_are_kept_and_no_page_is_a_dead_end(bank, phone):
    email = customer(phone, bank)
    sign_in_at_trifactor(phone, bank, email)
    phone.goto(bank.url + "/settings/totp")
    expect(phone.get_by_role("heading", name="Settings")).to_be_visible()
    assert "keeps your password" in phone.locator("main").inner_text()
    # Trifactor's security page, one click away and already signed in (the sign-in at Trifactor is its session).
    phone.get_by_role("link", name="Open your security page at Trifactor").click()
    expect(phone.get_by_role("heading", name="Your security")).to_be_visible()
    sessions = phone.locator("section", has=phone.get_by_role("heading", name="Where you are signed in"))
    assert "Chrome on Linux" in sessions.inner_text() and "This browser" in sessions.inner_text()
    phone.go_back()
    # A callback replayed later (Back after the sign-in) lands on the accounts, not an error.
    phone.goto(bank.url + "/signin/callback?state=nothing&code=x")
    expect(phone.get_by_role("heading", name="Your accounts")).to_be_visible()


class TextedDevice(Device):
    """The `trifactor` CLI enrolled as the device of a customer whose second factor is their mobile."""

    def __init__(self, bank, email, tmp_path):
        passphrase = tmp_path / "passphrase"
        passphrase.write_text("a long vault passphrase\n")
        passphrase.chmod(0o600)
        self.cli = os.environ.get("TRIFACTOR_CLI", ".build/debug/trifactor")
        self.env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), TRIFACTOR_SERVER=bank.op.issuer,
                        TRIFACTOR_VAULT_PASSPHRASE_FILE=str(passphrase), TERM="dumb")
        self.env.pop("XDG_RUNTIME_DIR", None)
        seen = seen_texts(bank)
        login = self.run("login", email)
        login.expect("Password: ")
        login.sendline(PASSWORD)
        login.expect(r"Code sent to [^:]+: ")
        login.sendline(texted_code(bank, seen)[0])
        login.expect(r"Signed in as .* \(AAL2")
        login.expect(pexpect.EOF)
        init = self.run("device", "init", "--name", "laptop")
        init.expect("This machine is device")
        init.expect(pexpect.EOF)


def test_a_transfer_is_approved_on_the_customers_device_which_shows_the_payment(bank, phone, tmp_path):
    """The payment page pushes the transfer to the customer's device (the CLI): it shows amount, payee and IBAN,
    the customer types the number the page shows, and the page moves on by itself to the bank, which moves the
    money once."""
    email = customer(phone, bank)
    sign_in_at_trifactor(phone, bank, email)
    device = TextedDevice(bank, email, tmp_path)
    before = balance(phone, bank)
    review_transfer(phone, "40.00")
    to_payment_page(phone, bank)
    phone.get_by_role("link", name="Approve on your device “laptop”").click()
    expect(phone.get_by_text("We will ask your device “laptop” to approve this payment")).to_be_visible()
    phone.get_by_role("button", name="Send to my device").click()
    number = int(phone.locator(".number").inner_text())
    main = phone.locator("main").inner_text()
    assert "Erika Mustermann" in main and "40.00" in main, main
    shot(phone, "standard-payment-device")
    # While it waits, the page stays put (its script asks every 2 s): a keyboard user's focus is not lost.
    other_way = phone.get_by_role("link", name=re.compile("Text or call"))
    other_way.focus()
    phone.wait_for_timeout(4500)
    assert phone.evaluate("document.activeElement.textContent").startswith("Text or call")
    approve = device.run("approve", "--once", timeout=40)
    approve.expect(r"Trifactor Bank asks you to approve a payment, \d+ s left:")
    approve.expect(re.escape("Amount: EUR 40.00"))
    approve.expect("To:     Erika Mustermann")
    approve.expect(re.escape(f"IBAN:   {IBAN}"))
    approve.expect(r"From:   NL\d\d TRFB")  # the customer's own account, which the device shows too
    approve.expect("Type the number shown on the payment screen")
    approve.sendline(str(number))
    approve.expect("Approved.")
    approve.expect(pexpect.EOF)
    expect(phone.get_by_text("Sent EUR 40.00 to Erika Mustermann")).to_be_visible(timeout=15_000)
    assert balance(phone, bank) != before


def test_bank_by_phone_staff_ask_a_caller_to_approve_on_their_device(bank, phone, tmp_path):
    """An agent types the caller's email and what they approve; the caller's device shows it and they pick the
    number the agent reads out; the agent's page shows the outcome. A customer's page is refused."""
    agent = customer(phone, bank)
    sign_in_at_trifactor(phone, bank, agent)
    phone.goto(bank.url + "/staff/phone")
    expect(phone.get_by_role("heading", name="For staff only")).to_be_visible()
    subprocess.run([BANK, "staff", "add", agent], env=bank.env, check=True, capture_output=True)
    caller = bank.op.user()
    device = Device(bank.op, caller, tmp_path)
    phone.goto(bank.url + "/settings")
    phone.get_by_role("link", name="Bank by phone").click()
    phone.get_by_label("Customer's email").fill(caller.email)
    phone.get_by_label("What they approve").fill("Transfer EUR 250.00 to Erika Mustermann")
    phone.get_by_role("button", name="Ask the customer").click()
    expect(phone.get_by_role("heading", name="Waiting for the customer")).to_be_visible()
    number = int(phone.locator(".number").inner_text())
    shot(phone, "bank-by-phone-waiting")
    # Reloads and a second tab poll no earlier than Trifactor's interval (an early poll would slow every later one).
    phone.reload()
    second = phone.context.new_page()
    second.goto(phone.url)
    phone.reload()
    second.close()
    shown = device.answer(number, expect_message="Transfer EUR 250.00 to Erika Mustermann")
    assert "Trifactor Bank" in shown, shown
    expect(phone.get_by_text(f"{caller.email} approved on their device.")).to_be_visible(timeout=15_000)
    # A wrong number is a denial, said as such.
    phone.get_by_role("link", name="Ask another customer").click()
    phone.get_by_label("Customer's email").fill(caller.email)
    phone.get_by_label("What they approve").fill("Change the address on the account")
    phone.get_by_role("button", name="Ask the customer").click()
    number = int(phone.locator(".number").inner_text())
    approve = device.run("approve", "--once", timeout=40)
    approve.expect("Change the address on the account")
    approve.expect("Type the number the app gave you")
    approve.sendline(str(number % 90 + 1))
    approve.expect("Denied: that was not the app's number")
    approve.expect(pexpect.EOF)
    expect(phone.get_by_text("The customer declined, or picked another number.")).to_be_visible(timeout=15_000)
    # An email nobody has: the same waiting page, with a number.
    phone.get_by_role("link", name="Ask another customer").click()
    phone.get_by_label("Customer's email").fill("nobody-here@example.com")
    phone.get_by_label("What they approve").fill("Transfer EUR 10.00")
    phone.get_by_role("button", name="Ask the customer").click()
    expect(phone.get_by_role("heading", name="Waiting for the customer")).to_be_visible()
    assert phone.locator(".number").inner_text().isdigit()
