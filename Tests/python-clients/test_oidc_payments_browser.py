"""A payment approved with a passkey in Chromium: a client pushes a `payment_initiation`, the customer signs in on
the hosted pages with a passkey (a CDP virtual authenticator), reads the payment on the payment page and approves
it with the passkey again, over a challenge bound to the details; the client's code carries the details. Back after
the approval never shows the payment again. Screenshots of the payment page at phone and desktop size go to
.build/payment-screenshots/ (docs/images/payment-approval.png is one of them)."""
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import tempfile
import uuid
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests

from conftest import _binary, _run, free_port, plain_http_server
from oidc_support import PASSWORD, pkce_pair
from test_oidc_apache_browser import enroll_passkey

class Bank(BaseHTTPRequestHandler):
    """The client's redirect URI, listening for real: the browser lands there with the code."""

    def do_GET(self):
        body = b"<!doctype html><title>Bank</title><h1>Back at the bank</h1>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


BANK_PORT = free_port()
CALLBACK = f"http://localhost:{BANK_PORT}/callback"
SHOTS = Path(".build/payment-screenshots")
DETAILS = [{"type": "payment_initiation", "instructedAmount": {"currency": "EUR", "amount": "250.00"},
            "creditorName": "Erika Mustermann", "creditorAccount": {"iban": "DE89 3704 0044 0532 0130 00"},
            "remittanceInformationUnstructured": "Rent December"}]


@pytest.fixture(scope="module")
def provider():
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-pay-browser."))
    port = free_port()
    db, key = f"sqlite:{tmp / 't.db'}", str(tmp / "k.key")
    bank = ThreadingHTTPServer(("127.0.0.1", BANK_PORT), Bank)
    threading.Thread(target=bank.serve_forever, daemon=True).start()
    with plain_http_server(tmp, [
        "--dev", "--listen", f"127.0.0.1:{port}", "--public-url", f"http://localhost:{port}", "--oidc", "1",
        "--database-url", db, "--key-file", key, "--webauthn-rp-id", "localhost",
    ]) as srv:
        client = json.loads(_run([_binary(), "clients", "create", "--name", "Trifactor Bank", "--id", "bank",
                                  "--redirect-uris", CALLBACK, "--first-party", "--json",
                                  "--database-url", db, "--key-file", key]))
        srv.issuer, srv.client = f"http://localhost:{port}", client
        try:
            yield srv
        finally:
            bank.shutdown()


@pytest.fixture
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(15_000)
    page.console_messages = []
    page.on("console", lambda m: page.console_messages.append(f"{m.type}: {m.text}"))
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    page.authenticator = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True}})["authenticatorId"]
    page.cdp = cdp
    try:
        yield page
    finally:
        context.close()


def customer(provider, page):
    """A verified account whose only factor is a passkey in this page's authenticator."""
    email = f"payer-{uuid.uuid4().hex[:10]}@example.com"
    provider.create_account(email, PASSWORD, "Erika Payer")
    token = provider.expect(201, "POST", "/v1/sessions", {"email": email, "password": PASSWORD})["token"]
    enroll_passkey(page, provider, token)
    page.context.clear_cookies()  # signed out: the hosted pages start from the email
    return email


def push(provider):
    verifier, challenge = pkce_pair()
    r = requests.post(provider.issuer + "/par", auth=(provider.client["client_id"], provider.client["client_secret"]),
                      data={"response_type": "code", "redirect_uri": CALLBACK, "scope": "openid",
                            "code_challenge": challenge, "code_challenge_method": "S256",
                            "authorization_details": json.dumps(DETAILS)}, timeout=10)
    assert r.status_code == 201, r.text
    return provider.issuer + "/authorize?" + urlencode(
        {"client_id": "bank", "request_uri": r.json()["request_uri"]}), verifier


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    for label, size in (("phone", {"width": 390, "height": 844}), ("desktop", {"width": 1280, "height": 900})):
        page.set_viewport_size(size)
        page.screenshot(path=str(SHOTS / f"{name}-{label}.png"), full_page=True)


def test_a_payment_is_approved_with_a_passkey_over_its_details(provider, page):
    customer(provider, page)
    url, verifier = push(provider)
    page.goto(url)
    # The sign-in page offers the passkey as the email field's autofill (conditional mediation): the authenticator
    # answers, and the customer is signed in with it, then shown the payment.
    page.wait_for_url(re.compile(r"/authorize/payment"))
    page.get_by_role("heading", name="Approve this payment").wait_for()
    body = page.inner_text("main")
    for shown in ("€250.00", "Erika Mustermann", "DE89 3704 0044 0532 0130 00", "Rent December"):
        assert shown in body, body
    shot(page, "payment-approval")
    page.get_by_role("button", name="Approve payment").click()
    page.wait_for_url(re.compile(re.escape(CALLBACK)))
    code = parse_qs(urlsplit(page.url).query)["code"][0]
    r = requests.post(provider.issuer + "/token",
                      auth=(provider.client["client_id"], provider.client["client_secret"]),
                      data={"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK,
                            "code_verifier": verifier}, timeout=10)
    assert r.status_code == 200 and r.json()["authorization_details"] == DETAILS, r.text
    # Back after the approval: the flow is over; the page says so and links back to the bank, never a second
    # approval or an error.
    page.go_back()
    page.wait_for_load_state()
    assert "Approve payment" not in page.inner_text("body")
    assert page.get_by_role("link", name=re.compile("Trifactor Bank")).count() >= 1 or \
        "Back at the bank" in page.inner_text("body")
