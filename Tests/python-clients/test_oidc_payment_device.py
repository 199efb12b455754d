"""A payment approved on the customer's device: the hosted payment page pushes the payment to the `trifactor` CLI,
enrolled as the customer's device. The CLI shows amount, payee and IBAN (from the details whose hash it recomputes
and signs with its decision), and the customer types the number the page shows (pexpect). A denial says so and
offers the push again; the approved payment is spent once."""
import html
import re
from urllib.parse import urlencode, urljoin

import pexpect
import pytest

from oidc_support import PASSWORD, TIMEOUT, Browser, op, pkce_pair  # noqa: F401
from test_oidc_ciba import Device
from oidc_support import oauth_error
from test_oidc_payments import IBAN, consume, form, payer, payment, submit, to_payment_page


@pytest.fixture(scope="module")
def bank(op):
    return op.register(name="Device Bank", grants="authorization_code", scopes="openid")


@pytest.fixture
def customer(op, tmp_path):
    """A customer with an authenticator app and this test's own CLI device (pushes are limited per user)."""
    user = op.user()
    user.device = Device(op, user, tmp_path)
    return user


def number_on(page):
    found = re.search(r'<p class="number"[^>]*>(\d\d)</p>', page.text)
    assert found, f"no number on {page.url}: {page.text[:1200]}"
    return int(found.group(1))


def answer(device, number, amount="EUR 250.00"):
    """`trifactor approve --once` shows the payment and takes `number` (None: Enter, a denial)."""
    approve = device.run("approve", "--once", timeout=40)
    approve.expect(r"Device Bank asks you to approve a payment, \d+ s left:")
    approve.expect(re.escape(f"Amount: {amount}"))
    approve.expect("To:     Erika Mustermann")
    approve.expect(re.escape(f"IBAN:   {IBAN}"))
    approve.expect("Type the number shown on the payment screen")
    approve.sendline("" if number is None else str(number))
    approve.expect("Approved." if number is not None else "Denied.")
    approve.expect(pexpect.EOF)


def reload(browser, page):
    return browser.follow(browser.http.get(page.url, allow_redirects=False, timeout=TIMEOUT))


def test_the_device_shows_the_payment_and_its_approval_gives_the_code_once(op, bank, customer):
    details = payment()
    browser, page, verifier = to_payment_page(op, bank, customer, details)
    # The device is offered (an authenticator app's code is not: it is the same whatever is paid).
    assert "We will ask your device “laptop” to approve this payment" in page.text, page.text
    assert "authenticator app" not in page.text.lower()
    sent = submit(browser, page, "/authorize/payment/send")
    assert sent.kind == "page", sent.describe()
    waiting = sent.response
    # The payment stays stated beside the number, and the page reloads itself until the device answers.
    assert "€250.00" in waiting.text and "Erika Mustermann" in waiting.text
    assert 'http-equiv="refresh"' in waiting.text
    number = number_on(waiting)
    # A reload before the device answers keeps waiting with the same number (no second push).
    again = reload(browser, waiting)
    assert again.kind == "page" and number_on(again.response) == number, again.describe()
    answer(customer.device, number)
    outcome = reload(browser, waiting)
    assert outcome.kind == "redirect" and outcome.code, outcome.describe()
    r = op.token(bank, {"grant_type": "authorization_code", "code": outcome.code,
                        "redirect_uri": bank.redirect_uri, "code_verifier": verifier})
    assert r.status_code == 200, r.text
    tokens = r.json()
    assert tokens["authorization_details"] == details
    # Spent once, for exactly these details.
    assert consume(op, bank, tokens["access_token"], details).json()["status"] == "used"
    oauth_error(consume(op, bank, tokens["access_token"], details), 400, "invalid_grant")


def test_a_denial_on_the_device_is_said_and_the_payment_can_be_sent_again(op, bank, customer):
    details = payment(amount="75.00")
    browser, page, verifier = to_payment_page(op, bank, customer, details)
    waiting = submit(browser, page, "/authorize/payment/send").response
    answer(customer.device, None, amount="EUR 75.00")
    declined = reload(browser, waiting)
    assert declined.kind == "page", declined.describe()
    assert "Your device did not approve the payment" in declined.response.text, declined.response.text
    assert "€75.00" in declined.response.text and form(declined.response, "/authorize/payment/send")
    # Sending it again asks the device anew; a second "Send" (another tab, a double click) sends nothing new.
    waiting = submit(browser, declined.response, "/authorize/payment/send").response
    number = number_on(waiting)
    twice = submit(browser, declined.response, "/authorize/payment/send").response
    assert number_on(twice) == number
    answer(customer.device, number, amount="EUR 75.00")
    outcome = reload(browser, waiting)
    assert outcome.kind == "redirect" and outcome.code, outcome.describe()


def test_an_approval_on_the_device_moves_on_a_page_that_shows_another_way(op, bank, tmp_path):
    user = op.user()
    user.device = Device(op, user, tmp_path)
    payer(op, user)  # and a phone: "Text or call" is the other way
    browser, page, _ = to_payment_page(op, bank, user, payment(amount="33.00", remittanceInformationUnstructured="Rent"))
    waiting = submit(browser, page, "/authorize/payment/send").response
    number = number_on(waiting)
    # The customer looks at the text's page meanwhile (nothing sent there), and approves on the device.
    link = re.search(r'href="([^"]*)"[^>]*>Text or call', waiting.text)
    assert link, waiting.text
    texting = browser.http.get(urljoin(waiting.url, html.unescape(link.group(1))), timeout=TIMEOUT)
    assert "We will text" in texting.text, texting.text
    approve = user.device.run("approve", "--once", timeout=40)
    approve.expect(re.escape("Amount: EUR 33.00"))
    approve.expect("Ref:    Rent")
    approve.expect("Type the number shown on the payment screen")
    approve.sendline(str(number))
    approve.expect("Approved.")
    approve.expect(pexpect.EOF)
    # "Text me a code" now sends nothing: the device's approval stands and the payment goes on.
    seen = {m["id"] for m in op.srv.outbox(user.phone)}
    outcome = submit(browser, texting, "/authorize/payment/send")
    assert outcome.kind == "redirect" and outcome.code, outcome.describe()
    assert {m["id"] for m in op.srv.outbox(user.phone)} == seen


def test_a_text_sent_meanwhile_leaves_the_devices_push_waiting_and_the_device_approval_stands(op, bank, tmp_path):
    user = op.user()
    user.device = Device(op, user, tmp_path)
    payer(op, user)
    browser, page, _ = to_payment_page(op, bank, user, payment(amount="21.00"))
    waiting = submit(browser, page, "/authorize/payment/send").response
    number = number_on(waiting)
    # A text sent and not used: the device's push still waits, and the device's approval is the one that counts.
    link = re.search(r'href="([^"]*)"[^>]*>Text or call', waiting.text)
    texting = browser.http.get(urljoin(waiting.url, html.unescape(link.group(1))), timeout=TIMEOUT)
    sent = submit(browser, texting, "/authorize/payment/send")
    assert sent.kind == "page" and "code that names this payment" in sent.response.text, sent.describe()
    answer(user.device, number, amount="EUR 21.00")
    outcome = browser.follow(browser.http.get(waiting.url, allow_redirects=False, timeout=TIMEOUT))
    assert outcome.kind == "redirect" and outcome.code, outcome.describe()


def test_details_the_device_could_not_show_are_not_offered_to_it(op, bank, customer):
    # An RFC 9396 common field beside the payment: its action would not state it, so the device is not asked.
    browser, page, _ = to_payment_page(op, bank, customer, payment(identifier="invoice-42"))
    assert "We will ask your device “laptop”" not in page.text
    assert page.status_code == 409 and "invoice-42" in page.text, page.text


def test_the_waiting_pages_question_is_answered_without_side_effects(op, bank, customer):
    browser, page, verifier = to_payment_page(op, bank, customer, payment(amount="8.00"))
    waiting = submit(browser, page, "/authorize/payment/send").response
    number = number_on(waiting)

    def asked():
        return browser.http.get(waiting.url, headers={"X-Trifactor-Wait": "1"}, allow_redirects=False,
                                timeout=TIMEOUT)

    assert asked().status_code == 204
    answer(customer.device, number, amount="EUR 8.00")
    changed = asked()
    assert changed.status_code == 200 and not changed.text
    # Asked twice more: still nothing done, and the reload then gives the app its code, once.
    assert asked().status_code == 200
    outcome = reload(browser, waiting)
    assert outcome.kind == "redirect" and outcome.code, outcome.describe()
    r = op.token(bank, {"grant_type": "authorization_code", "code": outcome.code,
                        "redirect_uri": bank.redirect_uri, "code_verifier": verifier})
    assert r.status_code == 200, r.text


def test_a_wrong_number_ends_that_approval_and_a_fourth_push_in_ten_minutes_is_refused(op, bank, customer):
    browser, page, _ = to_payment_page(op, bank, customer, payment(amount="9.99"))
    waiting = submit(browser, page, "/authorize/payment/send").response
    number = number_on(waiting)
    approve = customer.device.run("approve", "--once", timeout=40)
    approve.expect("Type the number shown on the payment screen")
    # A typo that is not a number is asked again, never taken as a no.
    approve.sendline("1o")
    approve.expect("That is not a number")
    approve.expect("Type the number shown on the payment screen")
    approve.sendline(str(10 if number != 10 else 11))
    approve.expect("that number was not on the payment screen")
    approve.expect(pexpect.EOF)
    ended = reload(browser, waiting)
    assert ended.kind == "page" and "Your device did not approve the payment" in ended.response.text, ended.describe()
    # A code posted to the payment with the device chosen approves nothing: the page is drawn again.
    url, inputs = form(ended.response, "/authorize/payment/send")
    posted = browser.follow(browser.http.post(url.replace("/send", ""), data={**inputs, "code": "123456"},
                                              allow_redirects=False, timeout=TIMEOUT))
    assert posted.kind == "page" and "We will ask your device “laptop”" in posted.response.text, posted.describe()
    # Three pushes in ten minutes at most, as for sign-ins: the fourth is refused with a sentence, never sent.
    page = posted.response
    for _ in range(2):
        waiting = submit(browser, page, "/authorize/payment/send").response
        number_on(waiting)
        customer.device.deny_all()
        page = reload(browser, waiting).response
        assert "Your device did not approve the payment" in page.text, page.text
    refused = submit(browser, page, "/authorize/payment/send")
    assert refused.kind == "page" and "Your device was asked three times" in refused.response.text, \
        refused.describe()
    assert 'class="number"' not in refused.response.text


def test_cancelling_while_the_device_waits_withdraws_the_push_and_tells_the_app_the_payment_was_declined(
        op, bank, customer):
    browser, page, _ = to_payment_page(op, bank, customer, payment(amount="60.00"))
    waiting = submit(browser, page, "/authorize/payment/send").response
    number = number_on(waiting)
    # The customer is looking at it on the device when the page is cancelled.
    approve = customer.device.run("approve", "--once", timeout=40)
    approve.expect("Type the number shown on the payment screen")
    cancelled = submit(browser, waiting, "/authorize/cancel")
    assert cancelled.kind == "redirect" and cancelled.params["error"] == "access_denied", cancelled.describe()
    assert cancelled.params["error_description"] == "The user declined the payment.", cancelled.params
    # The answer typed afterwards is told the request ended (exit 4), never that the device must sign in.
    approve.sendline(str(number))
    approve.expect("This request is no longer waiting")
    approve.expect(pexpect.EOF)
    approve.close()
    assert approve.exitstatus == 4, approve.exitstatus
    # The device no longer shows it: nothing is waiting.
    deny = customer.device.run("deny")
    deny.expect("Nothing is waiting for this device.")
    deny.expect(pexpect.EOF)


def test_a_hosted_sign_in_on_the_device_waits_and_its_script_question_changes_nothing(op, bank, customer):
    """The sign-in's waiting page, as the payment's: the script's question (X-Trifactor-Wait) is 204 while the device
    has not answered, and only a change otherwise; the reload after it signs in."""
    verifier, challenge = pkce_pair()
    pushed = op.post(bank, "/par", {"response_type": "code", "redirect_uri": bank.redirect_uri, "scope": "openid",
                                    "code_challenge": challenge, "code_challenge_method": "S256"})
    assert pushed.status_code == 201, pushed.text
    browser = Browser(op)
    link = op.issuer + "/authorize?" + urlencode({"client_id": bank.id, "request_uri": pushed.json()["request_uri"]})
    page = browser.follow(browser.http.get(link, allow_redirects=False, timeout=TIMEOUT)).response
    page = submit(browser, page, "/authorize/sign-in", email=customer.email).response
    page = submit(browser, page, "/authorize/password", password=PASSWORD).response
    device = re.search(r'href="([^"]*)"[^>]*>Approve on your device “laptop”', page.text)
    assert device, page.text
    page = browser.http.get(urljoin(page.url, html.unescape(device.group(1))), timeout=TIMEOUT)
    waiting = submit(browser, page, "/authorize/second-factor/send", how="push").response
    number = number_on(waiting)
    asked = browser.http.get(waiting.url, headers={"X-Trifactor-Wait": "1"}, allow_redirects=False, timeout=TIMEOUT)
    assert asked.status_code == 204, asked.status_code
    approve = customer.device.run("approve", "--once", timeout=40)
    approve.expect("Type the number shown on the sign-in screen")
    approve.sendline(str(number))
    approve.expect("Approved.")
    approve.expect(pexpect.EOF)
    changed = browser.http.get(waiting.url, headers={"X-Trifactor-Wait": "1"}, allow_redirects=False,
                               timeout=TIMEOUT)
    assert changed.status_code == 200 and not changed.text, changed.status_code
    # The question signed nobody in: the reload does, and the app gets its code.
    outcome = browser.follow(browser.http.get(waiting.url, allow_redirects=False, timeout=TIMEOUT))
    assert outcome.kind == "redirect" and outcome.code, outcome.describe()
    tokens = op.token(bank, {"grant_type": "authorization_code", "code": outcome.code,
                             "redirect_uri": bank.redirect_uri, "code_verifier": verifier})
    assert tokens.status_code == 200, tokens.text
