"""OpenID CIBA's fallback for a user without a device: `/bc-authorize` texts their phone (the dev phone here) a
link to a hosted page that names the client and the binding message and offers Approve and Deny. Approve gives
tokens that say one factor (the one-factor level, `amr` sms), so a request that asked for more ends access_denied;
Deny is access_denied; an expired link, a used link, a second tab and a form without the page's token each land on
a page that says what became of the request; a ping-mode client is pinged once the link decided; and the same on
PostgreSQL in a database of its own."""
import os
import re
import secrets
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest
import requests

from conftest import free_port
from oidc_support import TIMEOUT, forms_of, oauth_error, op, running_provider  # noqa: F401
from test_oidc_payments import payer

CIBA = "urn:openid:params:grant-type:ciba"
MESSAGE = "Pay invoice 42 at the counter"
LINK = re.compile(r"(https?://\S+/ciba/approve\?code=[A-Za-z0-9_-]{22})")


def claims_of(token):
    import base64
    import json
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


@pytest.fixture(scope="module")
def counter(op):
    return op.register(name="Branch counter", grants=CIBA, scopes="openid email", extra=["--ciba", "poll", "--ciba-text"])


def start(op, client, user, **params):
    return op.post(client, "/bc-authorize", {"scope": "openid", "login_hint": user.email,
                                             "binding_message": MESSAGE, **params})


def poll(op, client, auth_req_id, base=None):
    return op.token(client, {"grant_type": CIBA, "auth_req_id": auth_req_id}, base=base)


def texted_link(op, user, seen=()):
    """The text `/bc-authorize` sent to the user's phone, and the link in it."""
    message = op.srv.wait_message(user.phone, "sms", timeout=5, exclude_ids=seen)
    found = LINK.search(message["text"])
    assert found, message["text"]
    return message["text"], found.group(1)


def decide(http, page, decision):
    """Presses Approve or Deny on a link's page: the redirect back to the page, followed."""
    form = next(f for f in forms_of(page.text).forms if f["action"] == "/ciba/approve")
    r = http.post(page.url.split("/ciba/")[0] + "/ciba/approve", data={**form["inputs"], "decision": decision},
                  allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 303 and r.headers["Location"].startswith("/ciba/approve?code="), (r.status_code, r.text)
    return http.get(page.url.split("/ciba/")[0] + r.headers["Location"], timeout=TIMEOUT)


def hosted(r, status):
    assert r.status_code == status, f"{r.status_code} {r.text[:500]}"
    assert r.headers["Content-Type"].startswith("text/html")
    assert "default-src 'none'" in r.headers.get("Content-Security-Policy", "")


def test_a_user_without_a_device_approves_by_the_texted_link_and_gets_one_factor(op, counter):
    user = payer(op)
    seen = {m["id"] for m in op.srv.outbox(user.phone)}
    r = start(op, counter, user, scope="openid email")
    # The same answer as for anyone: nothing says a text went instead of a push.
    assert r.status_code == 200 and sorted(r.json()) == [
        "auth_req_id", "binding_number", "expires_in", "interval"], r.text
    body = r.json()
    text, link = texted_link(op, user, seen)
    assert "Branch counter" in text and MESSAGE in text, text
    oauth_error(poll(op, counter, body["auth_req_id"]), 400, "authorization_pending")
    first = time.monotonic()

    http = requests.Session()
    # A link preview (HEAD) and the page itself decide nothing.
    assert http.head(link, timeout=TIMEOUT).status_code == 200
    page = http.get(link, timeout=TIMEOUT)
    hosted(page, 200)
    assert "Branch counter" in page.text and MESSAGE in page.text, page.text
    assert "Approve" in page.text and "Deny" in page.text
    assert "You are answering a request of Branch counter" in page.text
    second_tab = http.get(link, timeout=TIMEOUT)

    done = decide(http, page, "approve")
    hosted(done, 200)
    assert "Request approved" in done.text and "/ciba/approve" not in done.text.split("<main")[1], done.text
    # The other tab, still open, says Deny: the approval stands, and the page says so.
    late = decide(http, second_tab, "deny")
    assert "Request approved" in late.text, late.text
    # The link again (Back, a reload, the text tapped twice): what became of the request, no form.
    again = requests.get(link, timeout=TIMEOUT)
    hosted(again, 200)
    assert "Request approved" in again.text and 'name="decision"' not in again.text

    time.sleep(max(0.0, 5.2 - (time.monotonic() - first)))
    r = poll(op, counter, body["auth_req_id"])
    assert r.status_code == 200, r.text
    claims = claims_of(r.json()["id_token"])
    # One factor, the phone's possession: the one-factor level, said as sms (RFC 8176).
    assert claims["acr"] == "urn:trifactor:acr:password" and claims["amr"] == ["sms"], claims
    assert op.userinfo(r.json()["access_token"]).json()["email"] == user.email
    time.sleep(5.2)
    oauth_error(poll(op, counter, body["auth_req_id"]), 400, "invalid_grant")


def test_deny_by_the_link_is_access_denied_and_a_page_without_its_token_decides_nothing(op, counter):
    user = payer(op)
    seen = {m["id"] for m in op.srv.outbox(user.phone)}
    body = start(op, counter, user).json()
    _, link = texted_link(op, user, seen)
    # A form posted from elsewhere (no cookie, no token): the page again, nothing decided.
    code = link.split("code=")[1]
    forged = requests.post(op.issuer + "/ciba/approve", data={"code": code, "decision": "approve"},
                           allow_redirects=False, timeout=TIMEOUT)
    assert forged.status_code == 303, forged.text
    oauth_error(poll(op, counter, body["auth_req_id"]), 400, "authorization_pending")
    first = time.monotonic()
    http = requests.Session()
    done = decide(http, http.get(link, timeout=TIMEOUT), "deny")
    hosted(done, 200)
    assert "Request denied" in done.text and "Branch counter" in done.text
    time.sleep(max(0.0, 5.2 - (time.monotonic() - first)))
    oauth_error(poll(op, counter, body["auth_req_id"]), 400, "access_denied")
    # A code that names nothing: a page that says so.
    hosted(requests.get(op.issuer + "/ciba/approve?code=" + "A" * 22, timeout=TIMEOUT), 404)
    hosted(requests.get(op.issuer + "/ciba/approve", timeout=TIMEOUT), 404)


def test_no_text_when_more_than_one_factor_is_asked_for_or_the_client_does_not_take_it(op, counter):
    """A texted link is one factor: a request asking for more, or from a client registered without --ciba-text,
    texts nobody (the answer is the same as for anyone else, and the request just expires)."""
    user = payer(op)
    seen = {m["id"] for m in op.srv.outbox(user.phone)}
    asked_more = start(op, counter, user, acr_values="urn:trifactor:acr:mfa")
    assert asked_more.status_code == 200 and asked_more.json()["auth_req_id"], asked_more.text
    plain = op.register(name="Plain counter", grants=CIBA, scopes="openid email", extra=["--ciba", "poll"])
    untexted = start(op, plain, user)
    assert untexted.status_code == 200 and untexted.json()["auth_req_id"], untexted.text
    time.sleep(1.5)
    assert [m for m in op.srv.outbox(user.phone) if m["id"] not in seen] == []
    oauth_error(poll(op, counter, asked_more.json()["auth_req_id"]), 400, "authorization_pending")


def test_an_expired_link_says_so_and_approves_nothing(op, counter):
    user = payer(op)
    seen = {m["id"] for m in op.srv.outbox(user.phone)}
    body = start(op, counter, user, requested_expiry="30").json()
    _, link = texted_link(op, user, seen)
    http = requests.Session()
    page = http.get(link, timeout=TIMEOUT)
    hosted(page, 200)
    with op.instance("--clock-offset", "60") as later:
        path = link.split("/ciba/")[1]
        expired = http.get(f"{later}/ciba/{path}", timeout=TIMEOUT)
        hosted(expired, 410)
        assert "This request has expired" in expired.text and 'name="decision"' not in expired.text
        # The page opened before, approved too late: still expired.
        form = next(f for f in forms_of(page.text).forms if f["action"] == "/ciba/approve")
        r = http.post(f"{later}/ciba/approve", data={**form["inputs"], "decision": "approve"}, timeout=TIMEOUT)
        assert "This request has expired" in r.text, r.text
        oauth_error(poll(op, counter, body["auth_req_id"], base=later), 400, "expired_token")


class Pings(BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Pings.received.append((self.headers.get("Authorization"), body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_ping_mode_is_pinged_once_the_link_decided(op):
    user = payer(op)
    port = free_port()
    server = HTTPServer(("127.0.0.1", port), Pings)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        shop = op.register(name="Shop till", grants=CIBA, extra=[
            "--ciba", "ping", "--ciba-notification-endpoint", f"http://127.0.0.1:{port}/ciba", "--ciba-text"])
        seen = {m["id"] for m in op.srv.outbox(user.phone)}
        body = start(op, shop, user, client_notification_token="till-secret-51c2").json()
        _, link = texted_link(op, user, seen)
        time.sleep(1)
        assert Pings.received == [], "pinged before the user decided"
        http = requests.Session()
        decide(http, http.get(link, timeout=TIMEOUT), "approve")
        deadline = time.monotonic() + 15
        while not Pings.received and time.monotonic() < deadline:
            time.sleep(0.1)
        assert Pings.received and Pings.received[0][0] == "Bearer till-secret-51c2", Pings.received
        r = poll(op, shop, body["auth_req_id"])
        assert r.status_code == 200 and claims_of(r.json()["id_token"])["amr"] == ["sms"], r.text
    finally:
        server.shutdown()


def test_approved_by_the_texted_link_on_postgresql():
    url = os.environ.get("TRIFACTOR_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("no PostgreSQL (run through scripts/with-postgres.sh, as make test does)")
    name = f"ciba_text_{secrets.token_hex(4)}"
    subprocess.run(["psql", url, "-q", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    with running_provider("--migrate-on-start", "always", db_url=url.rsplit("/", 1)[0] + "/" + name) as provider:
        client = provider.register(name="Branch counter", grants=CIBA, extra=["--ciba", "poll", "--ciba-text"])
        user = payer(provider)
        seen = {m["id"] for m in provider.srv.outbox(user.phone)}
        body = start(provider, client, user).json()
        _, link = texted_link(provider, user, seen)
        first = time.monotonic()
        http = requests.Session()
        page = http.get(link, timeout=TIMEOUT)
        done = decide(http, page, "approve")
        assert "Request approved" in done.text, done.text
        # Used once: the same form again changes nothing.
        assert "Request approved" in decide(http, page, "deny").text
        time.sleep(max(0.0, 5.2 - (time.monotonic() - first)))
        r = poll(provider, client, body["auth_req_id"])
        assert r.status_code == 200 and claims_of(r.json()["id_token"])["amr"] == ["sms"], r.text
