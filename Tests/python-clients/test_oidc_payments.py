"""Payments as RFC 9396 authorization details: a client pushes a `payment_initiation`, the hosted page states it,
the user approves it with a second factor bound to it (a text that names amount and payee; a passkey in
test_oidc_payments_browser.py), the token carries the approved details, and the client spends them once at
/authorization_details/consume. A changed detail voids the approval; 20 racing spends move the money once, on
SQLite and on PostgreSQL; malformed details are refused with invalid_authorization_details; an operator's own type
is checked by its JSON Schema."""
import base64
import json
import os
import secrets
import subprocess
import threading
from urllib.parse import urlencode, urljoin

import pytest
import requests

from conftest import sms_code, wait_until
from oidc_support import PASSWORD, TIMEOUT, Browser, User, forms_of, oauth_error, op, pkce_pair, running_provider  # noqa: F401

IBAN = "DE89 3704 0044 0532 0130 00"


def payment(amount="250.00", currency="EUR", iban=IBAN, **extra):
    return [{"type": "payment_initiation", "instructedAmount": {"currency": currency, "amount": amount},
             "creditorName": "Erika Mustermann", "creditorAccount": {"iban": iban}, **extra}]


def claims_of(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def push(op, client, details, **params):
    verifier, challenge = pkce_pair()
    r = op.post(client, "/par", {"response_type": "code", "redirect_uri": client.redirect_uri, "scope": "openid",
                                 "code_challenge": challenge, "code_challenge_method": "S256",
                                 "authorization_details": json.dumps(details), **params})
    return r, verifier


def to_payment_page(op, client, user, details):
    """Pushes the payment and signs `user` in: the browser stops on the payment page."""
    pushed, verifier = push(op, client, details)
    assert pushed.status_code == 201, pushed.text
    browser = Browser(op)
    link = op.issuer + "/authorize?" + urlencode({"client_id": client.id, "request_uri": pushed.json()["request_uri"]})
    outcome = browser.authorize(link, user)
    assert outcome.kind == "page" and "/authorize/payment" in outcome.location, outcome.describe()
    browser.link = link
    return browser, outcome.response, verifier


def form(page, action):
    found = [f for f in forms_of(page.text).forms if f["action"].startswith(action)]
    assert found, f"no form to {action} on {page.url}: {page.text[:800]}"
    return urljoin(page.url, found[0]["action"]), dict(found[0]["inputs"])


def submit(browser, page, action, **fields):
    url, inputs = form(page, action)
    r = browser.http.post(url, data={**inputs, **fields}, allow_redirects=False, timeout=TIMEOUT)
    return browser.follow(r)


def payer(op, user=None):
    """A customer who signs in with an authenticator app and approves payments with texts to their phone (`user`
    gets the phone when given)."""
    user = user or op.user()
    number = "4474009" + str(secrets.randbelow(10**5)).zfill(5)
    pending = op.srv.expect(200, "POST", "/v1/sessions", {"email": user.email, "password": user.password})
    app = pending["hints"][0]["enrollment_id"]
    token = op.srv.expect(201, "POST", "/v1/sessions/mfa", {"pending_credential": pending["pending_credential"],
                                                             "enrollment_id": app, "code": user.next_code()})["token"]
    session = op.srv.expect(202, "POST", "/v1/mfa/enrollments", {"kind": "phone", "phone": "+" + number},
                            token=token)["enrollment_session"]
    wait_until(lambda: any(m["status"] == "sent" for m in op.srv.outbox(number)), "the enrollment text")
    op.srv.expect(201, "POST", f"/v1/mfa/enrollments/{session}", {"code": op.srv.code_for(number)}, token=token)
    user.phone = number
    return user


def texted(op, browser, page, user):
    """"Text me a code" on the payment page: the page with the code field, and the text."""
    seen = {m["id"] for m in op.srv.outbox(user.phone)}
    sent = submit(browser, page, "/authorize/payment/send")
    assert sent.kind == "page" and "/authorize/payment" in sent.location, sent.describe()
    return sent.response, op.srv.wait_message(user.phone, "sms", timeout=5, exclude_ids=seen)


def approve_with_text(op, client, user, details):
    browser, page, verifier = to_payment_page(op, client, user, details)
    page, message = texted(op, browser, page, user)
    outcome = submit(browser, page, "/authorize/payment", code=sms_code(message["text"]))
    assert outcome.kind == "redirect" and outcome.code, outcome.describe()
    r = op.token(client, {"grant_type": "authorization_code", "code": outcome.code,
                          "redirect_uri": client.redirect_uri, "code_verifier": verifier})
    assert r.status_code == 200, r.text
    return r.json()


def consume(op, client, token, details):
    return op.post(client, "/authorization_details/consume",
                   {"token": token, "authorization_details": json.dumps(details)})


@pytest.fixture(scope="module")
def bank(op):
    return op.register(name="Payments Bank", grants="authorization_code refresh_token",
                       scopes="openid offline_access")


def test_the_page_states_the_payment_and_a_text_naming_it_approves_it_once(op, bank):
    user = payer(op)
    details = payment(amount="1234.50", remittanceInformationUnstructured="Invoice 42")
    browser, page, verifier = to_payment_page(op, bank, user, details)
    # The amount as the text writes it: one formatter for the page and the text (never "EUR 1234.50" here and
    # "€1,234.50" there).
    for shown in ("€1,234.50", "Erika Mustermann", IBAN, "Invoice 42", "Payments Bank"):
        assert shown in page.text, f"{shown!r} is not on the payment page"
    # An authenticator app's code is the same whatever is paid: it is not offered for a payment.
    assert "authenticator app" not in page.text.lower()
    # The same link again (another tab, a reload of the first address): used, and the app is one click away.
    second = browser.http.get(browser.link, timeout=TIMEOUT)
    assert second.status_code == 400 and "Return to Payments Bank" in second.text, second.text
    # It speaks of the payment it pushed, not of a sign-in.
    assert "This payment link does not work" in second.text and "sign-in link" not in second.text, second.text
    assert "You are approving a payment for Payments Bank" in second.text
    page, message = texted(op, browser, page, user)
    assert "€1,234.50" in message["text"] and "Erika Mustermann" in message["text"], message["text"]
    assert "EUR 1234.50" not in page.text
    # A wrong code stays on the page with its error; the right one, typed with a space, gives the code.
    wrong = submit(browser, page, "/authorize/payment", code="000000")
    assert wrong.kind == "page" and wrong.response.status_code == 422, wrong.describe()
    assert "€1,234.50" in wrong.response.text and 'role="alert"' in wrong.response.text
    # The first wrong code already says how many tries are left.
    assert "Tries left before this approval ends: 4." in wrong.response.text, wrong.response.text
    code = sms_code(message["text"])
    outcome = submit(browser, wrong.response, "/authorize/payment", code=code[:3] + " " + code[3:])
    assert outcome.kind == "redirect" and outcome.code, outcome.describe()
    # Back to the payment page after the approval: it says the payment is approved (never a failure that invites
    # paying again), with the way back to the app.
    again = browser.http.get(page.url, allow_redirects=True, timeout=TIMEOUT)
    assert again.status_code == 200 and "Payment approved" in again.text and "Approve payment" not in again.text
    assert "Return to Payments Bank" in again.text
    assert "You are approving a payment for Payments Bank" in again.text
    r = op.token(bank, {"grant_type": "authorization_code", "code": outcome.code, "redirect_uri": bank.redirect_uri,
                        "code_verifier": verifier})
    assert r.status_code == 200, r.text
    tokens = r.json()
    # RFC 9396 §7 and §9.1: the token response and the access token carry the approved details; a payment's
    # approval is for one payment, so no refresh token brings it back.
    assert tokens["authorization_details"] == details
    assert claims_of(tokens["access_token"])["authorization_details"] == details
    assert "refresh_token" not in tokens
    introspected = op.post(bank, "/introspect", {"token": tokens["access_token"]}).json()
    assert introspected["active"] and introspected["authorization_details"] == details
    # Members in another order are the same details; the second spend is refused, and the spent token is over:
    # no resource server that introspects it sees the payment approved again.
    reordered = [dict(reversed(list(details[0].items())))]
    spent = consume(op, bank, tokens["access_token"], reordered)
    assert spent.status_code == 200 and spent.json()["status"] == "used", spent.text
    oauth_error(consume(op, bank, tokens["access_token"], details), 400, "invalid_grant")
    assert op.post(bank, "/introspect", {"token": tokens["access_token"]}).json() == {"active": False}


def test_a_customer_without_a_phone_or_passkey_is_told_how_to_pay(op, bank):
    user = op.user()  # an authenticator app only
    browser, page, _ = to_payment_page(op, bank, user, payment())
    assert page.status_code == 409 and "passkey" in page.text and "€250.00" in page.text, page.text
    assert "You are approving a payment for Payments Bank" in page.text
    url, inputs = form(page, "/authorize/cancel")
    outcome = browser.follow(browser.http.post(url, data=inputs, allow_redirects=False, timeout=TIMEOUT))
    assert outcome.kind == "redirect" and outcome.params["error"] == "access_denied", outcome.describe()


def test_an_unverified_email_is_told_to_verify_it_first(op, bank):
    email = f"unverified-{secrets.token_hex(5)}@example.com"
    op.srv.expect(202, "POST", "/v1/accounts", {"email": email, "password": PASSWORD, "display_name": "Not yet"})
    browser, page, _ = to_payment_page(op, bank, User(email=email), payment())
    assert page.status_code == 409 and "Verify your email address first" in page.text, page.text
    assert "€250.00" in page.text and form(page, "/authorize/cancel")


def test_a_changed_detail_voids_the_approval_and_only_its_confidential_client_spends_it(op, bank):
    tokens = approve_with_text(op, bank, payer(op), payment())
    other = op.register(name="Other app")
    oauth_error(consume(op, other, tokens["access_token"], payment()), 400, "invalid_grant")
    public = op.register(name="Public app", auth_method="none")
    oauth_error(consume(op, public, tokens["access_token"], payment()), 400, "unauthorized_client")
    body = oauth_error(consume(op, bank, tokens["access_token"], payment(amount="2500.00")), 400,
                       "invalid_authorization_details")
    assert "void" in body["error_description"]
    # Void: not even the approved details can be spent now.
    oauth_error(consume(op, bank, tokens["access_token"], payment()), 400, "invalid_grant")


def race(op, client, token, details, n=20):
    """`n` spends at once; a ledger debits the amount for each one the server answers "used"."""
    balance = {"cents": 100_000}
    lock = threading.Lock()
    answers = []
    start = threading.Barrier(n)

    def spend():
        start.wait()
        r = consume(op, client, token, details)
        with lock:
            answers.append(r.status_code)
            if r.status_code == 200:
                balance["cents"] -= 25_000

    threads = [threading.Thread(target=spend) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers, balance["cents"]


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_twenty_racing_spends_move_the_money_once(store, op, bank):
    if store == "sqlite":
        provider, client = op, bank
        token = approve_with_text(provider, client, payer(provider), payment())["access_token"]
        answers, cents = race(provider, client, token, payment())
    else:
        url = os.environ.get("TRIFACTOR_TEST_POSTGRES_URL")
        if not url:
            pytest.skip("no PostgreSQL (run through scripts/with-postgres.sh, as make test does)")
        # A database of its own: others' tests (the bank's) share the server's default one.
        name = f"payments_{secrets.token_hex(4)}"
        subprocess.run(["psql", url, "-q", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
        url = url.rsplit("/", 1)[0] + "/" + name
        with running_provider("--migrate-on-start", "always", db_url=url) as provider:
            client = provider.register(name="Payments Bank")
            token = approve_with_text(provider, client, payer(provider), payment())["access_token"]
            answers, cents = race(provider, client, token, payment())
    assert sorted(answers) == [200] + [400] * 19, answers
    assert cents == 75_000


@pytest.mark.parametrize("details,fault", [
    (payment(iban="DE88 3704 0044 0532 0130 00"), "IBAN"),
    (payment(amount="1000.5", currency="JPY"), "decimal places"),
    (payment(amount="0.00"), "positive"),
    (payment(currency="XXX"), "ISO 4217"),
    (payment(bic="COBADEFFXXX"), "bic"),
    ([{"type": "account_information"}], "does not know"),
    ({"type": "payment_initiation"}, "JSON array"),
    (payment() + payment(amount="1.00"), "one payment_initiation"),
])
def test_malformed_details_are_refused_when_pushed(op, bank, details, fault):
    r, _ = push(op, bank, details)
    body = oauth_error(r, 400, "invalid_authorization_details")
    assert fault in body["error_description"], body


def test_a_public_client_may_not_ask_for_a_payment_it_could_never_spend(op):
    public = op.register(name="Public app", auth_method="none")
    verifier, challenge = pkce_pair()
    r = requests.get(op.issuer + "/authorize", params={
        "client_id": public.id, "response_type": "code", "redirect_uri": public.redirect_uri, "scope": "openid",
        "code_challenge": challenge, "code_challenge_method": "S256", "state": "s1",
        "authorization_details": json.dumps(payment())}, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code in (302, 303) and "error=invalid_authorization_details" in r.headers["Location"], r.headers


def test_discovery_lists_the_types_and_cancel_answers_access_denied(op, bank):
    assert op.metadata["authorization_details_types_supported"] == ["payment_initiation"]
    browser, page, _ = to_payment_page(op, bank, payer(op), payment())
    url, inputs = form(page, "/authorize/cancel")
    outcome = browser.follow(browser.http.post(url, data=inputs, allow_redirects=False, timeout=TIMEOUT))
    assert outcome.kind == "redirect" and outcome.params["error"] == "access_denied", outcome.describe()


def test_an_operators_type_is_checked_by_its_schema(tmp_path):
    folder = tmp_path / "types"
    folder.mkdir()
    (folder / "account_information.json").write_text(json.dumps({
        "type": "object", "required": ["type", "accounts"], "additionalProperties": False,
        "properties": {"type": {"const": "account_information"},
                       "accounts": {"type": "array", "minItems": 1, "maxItems": 10,
                                    "items": {"type": "string", "pattern": "^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$"}}}}))
    with running_provider("--oidc-authorization-details-types", str(folder)) as provider:
        assert provider.metadata["authorization_details_types_supported"] == [
            "account_information", "payment_initiation"]
        client = provider.register(name="Accounts app")
        good, _ = push(provider, client, [{"type": "account_information", "accounts": ["DE89370400440532013000"]}])
        assert good.status_code == 201, good.text
        bad, _ = push(provider, client, [{"type": "account_information", "accounts": ["nope"]}])
        body = oauth_error(bad, 400, "invalid_authorization_details")
        assert body["error_description"].startswith("authorization_details[0]/accounts/0"), body


def test_back_after_cancelling_a_payment_says_the_payment_approval_ended_not_a_sign_in(op, bank):
    user = payer(op)
    browser, page, _ = to_payment_page(op, bank, user, payment(amount="75.00"))
    cancelled = submit(browser, page, "/authorize/cancel")
    assert cancelled.kind == "redirect" and "error=access_denied" in cancelled.location, cancelled.describe()
    back = browser.http.get(page.url, timeout=TIMEOUT)
    assert back.status_code == 400, back.text
    assert "This payment approval has ended" in back.text and "sign-in has ended" not in back.text, back.text
    assert "You are approving a payment for Payments Bank" in back.text and "Return to Payments Bank" in back.text
