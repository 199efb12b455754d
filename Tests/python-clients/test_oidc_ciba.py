"""OpenID CIBA Core 1.0 (poll and ping): a client asks for a user's approval on their device with
`/bc-authorize`; the `trifactor` CLI, enrolled as the user's device, shows the binding message and the user types
the number the client gave them (pexpect). Ported from the conformance suite's CIBA checks: authorization_pending,
slow_down when polled too fast, access_denied after a denial, expired_token, a request id used once and only by
its client, the same answer for an unknown user, and a ping received by a loopback client with its bearer token."""
import base64
import json
import os
import secrets
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pexpect
import pytest
import requests

from conftest import free_port
from oidc_support import TIMEOUT, PASSWORD, oauth_error, op, running_provider  # noqa: F401

CIBA = "urn:openid:params:grant-type:ciba"
MESSAGE = "Transfer EUR 250.00 to Erika Mustermann"


def claims_of(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


class Device:
    """The `trifactor` CLI on a machine of the user's, signed in and enrolled as their device."""

    def __init__(self, op, user, tmp_path):
        self.cli = os.environ.get("TRIFACTOR_CLI", ".build/debug/trifactor")
        passphrase = tmp_path / "passphrase"
        passphrase.write_text("a long vault passphrase\n")
        passphrase.chmod(0o600)
        self.env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), TRIFACTOR_SERVER=op.issuer,
                        TRIFACTOR_VAULT_PASSPHRASE_FILE=str(passphrase), TERM="dumb")
        self.env.pop("XDG_RUNTIME_DIR", None)
        login = self.run("login", user.email)
        login.expect("Password: ")
        login.sendline(PASSWORD)
        login.expect("Code from your authenticator app: ")
        login.sendline(user.next_code())
        login.expect(r"Signed in as .* \(AAL2")
        login.expect(pexpect.EOF)
        init = self.run("device", "init", "--name", "laptop")
        init.expect("This machine is device")
        init.expect(pexpect.EOF)

    def deny_all(self):
        deny = self.run("deny")
        deny.expect(pexpect.EOF)

    def run(self, *args, timeout=30):
        return pexpect.spawn(self.cli, list(args), env=self.env, encoding="utf-8", timeout=timeout)

    def answer(self, number, expect_message=MESSAGE):
        """`trifactor approve --once`: the app's message is shown; the user types `number` (None: Enter, a denial)."""
        approve = self.run("approve", "--once", timeout=40)
        approve.expect(r"([^\r\n]*) asks for your approval, \d+ s left\.")
        shown = approve.match.group(1)
        assert expect_message in shown, shown
        approve.expect("Type the number the app gave you")
        approve.sendline("" if number is None else str(number))
        approve.expect("Approved." if number is not None else "Denied.")
        approve.expect(pexpect.EOF)
        return shown


@pytest.fixture(scope="module")
def bank(op):
    return op.register(name="Bank by phone", grants=f"{CIBA} refresh_token", scopes="openid email offline_access",
                       extra=["--ciba", "poll"])


@pytest.fixture(scope="module")
def customer(op, tmp_path_factory):
    user = op.user()
    return user, Device(op, user, tmp_path_factory.mktemp("device"))


def start(op, client, **params):
    data = {"scope": "openid", "binding_message": MESSAGE, **params}
    return op.post(client, "/bc-authorize", data)


def poll(op, client, auth_req_id, base=None):
    return op.token(client, {"grant_type": CIBA, "auth_req_id": auth_req_id}, base=base)


def test_discovery_names_the_endpoint_and_modes(op):
    m = op.metadata
    assert m["backchannel_authentication_endpoint"] == op.issuer + "/bc-authorize"
    assert m["backchannel_token_delivery_modes_supported"] == ["poll", "ping"]
    assert m["backchannel_user_code_parameter_supported"] is False
    assert CIBA in m["grant_types_supported"]


def test_poll_mode_pending_then_approved_on_the_device_by_typing_the_number(op, bank, customer):
    user, device = customer
    r = start(op, bank, login_hint=user.email, scope="openid email")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["expires_in"] == 120 and body["interval"] == 5 and 10 <= body["binding_number"] <= 99, body
    oauth_error(poll(op, bank, body["auth_req_id"]), 400, "authorization_pending")
    first = time.monotonic()
    shown = device.answer(body["binding_number"])
    assert shown.startswith("Bank by phone"), shown
    time.sleep(max(0.0, 5.2 - (time.monotonic() - first)))
    r = poll(op, bank, body["auth_req_id"])
    assert r.status_code == 200, r.text
    tokens = r.json()
    claims = claims_of(tokens["id_token"])
    # The device's approval key is released by the user's check (the vault passphrase): the hardware-key level.
    assert claims["acr"] == "urn:trifactor:acr:hwk" and "hwk" in claims["amr"], claims
    assert "nonce" not in claims and claims["aud"] == bank.id
    assert tokens.get("refresh_token")
    userinfo = op.userinfo(tokens["access_token"]).json()
    assert userinfo["email"] == user.email
    # Once: the same id again, or by another client, gives nothing.
    time.sleep(5.2)
    oauth_error(poll(op, bank, body["auth_req_id"]), 400, "invalid_grant")


def test_a_denial_on_the_device_is_access_denied_and_polling_too_fast_is_slow_down(op, bank, customer):
    user, device = customer
    body = start(op, bank, login_hint=user.email).json()
    oauth_error(poll(op, bank, body["auth_req_id"]), 400, "authorization_pending")
    slow = oauth_error(poll(op, bank, body["auth_req_id"]), 400, "slow_down")
    assert "10 seconds" in slow["error_description"], slow
    device.answer(None)
    time.sleep(10.2)
    oauth_error(poll(op, bank, body["auth_req_id"]), 400, "access_denied")


def test_a_request_expires_and_belongs_to_its_client(op, bank, customer):
    user, device = customer
    body = start(op, bank, login_hint=user.email, requested_expiry="30").json()
    assert body["expires_in"] == 30
    other = op.register(name="Another bank", grants=CIBA, extra=["--ciba", "poll"])
    oauth_error(poll(op, other, body["auth_req_id"]), 400, "invalid_grant")
    with op.instance("--clock-offset", "60") as later:
        oauth_error(poll(op, bank, body["auth_req_id"], base=later), 400, "expired_token")
    device.deny_all()  # its push still waits on the device for 30 s


def test_a_fourth_request_in_ten_minutes_reaches_no_device_but_answers_the_same(op, bank, customer):
    user, device = customer
    body = start(op, bank, login_hint=user.email)
    assert body.status_code == 200 and sorted(body.json()) == [
        "auth_req_id", "binding_number", "expires_in", "interval"], body.text
    waiting = device.run("approve")
    waiting.expect("Nothing is waiting for this device.")
    waiting.expect(pexpect.EOF)
    oauth_error(poll(op, bank, body.json()["auth_req_id"]), 400, "authorization_pending")


def test_unknown_users_get_the_same_answer_and_bad_requests_their_errors(op, bank):
    unknown = start(op, bank, login_hint="nobody-here@example.com")
    assert unknown.status_code == 200 and sorted(unknown.json()) == [
        "auth_req_id", "binding_number", "expires_in", "interval"], unknown.text
    oauth_error(poll(op, bank, unknown.json()["auth_req_id"]), 400, "authorization_pending")
    oauth_error(start(op, bank, login_hint="a@example.com", scope="email"), 400, "invalid_scope")
    oauth_error(start(op, bank), 400, "invalid_request")
    oauth_error(start(op, bank, login_hint="a@example.com", id_token_hint="x.y.z"), 400, "invalid_request")
    oauth_error(start(op, bank, login_hint="a@example.com", binding_message="x" * 101), 400, "invalid_binding_message")
    oauth_error(start(op, bank, login_hint="a@example.com", binding_message="line\nbreak"), 400,
                "invalid_binding_message")
    token = json.dumps({"sub_id": {"format": "email", "email": "nobody-here@example.com"}})
    assert start(op, bank, login_hint_token=token).status_code == 200
    oauth_error(start(op, bank, login_hint_token="{}"), 400, "invalid_request")
    plain = op.register(name="Not CIBA")
    oauth_error(start(op, plain, login_hint="a@example.com"), 400, "unauthorized_client")
    r = requests.post(op.issuer + "/bc-authorize", data={"scope": "openid", "login_hint": "a@example.com",
                                                         "client_id": bank.id}, timeout=TIMEOUT)
    oauth_error(r, 401, "invalid_client")


class Pings(BaseHTTPRequestHandler):
    received: list = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        Pings.received.append((self.headers.get("Authorization"), self.headers.get("Content-Type"), body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_ping_mode_tells_the_client_at_its_endpoint_with_its_bearer_token(op, tmp_path):
    # Another customer: the first has had the 3 pushes a user may get in 10 minutes.
    user = op.user()
    device = Device(op, user, tmp_path)
    port = free_port()
    server = HTTPServer(("127.0.0.1", port), Pings)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        shop = op.register(name="Shop counter", grants=CIBA, extra=[
            "--ciba", "ping", "--ciba-notification-endpoint", f"http://127.0.0.1:{port}/ciba"])
        oauth_error(start(op, shop, login_hint=user.email), 400, "invalid_request")  # no client_notification_token
        body = start(op, shop, login_hint=user.email, client_notification_token="shop-secret-8d1f").json()
        time.sleep(1)
        assert Pings.received == [], "pinged before the user decided"
        device.answer(body["binding_number"])
        deadline = time.monotonic() + 15
        while not Pings.received and time.monotonic() < deadline:
            time.sleep(0.1)
        assert Pings.received, "no ping arrived"
        auth, kind, raw = Pings.received[0]
        assert auth == "Bearer shop-secret-8d1f" and kind == "application/json"
        assert json.loads(raw) == {"auth_req_id": body["auth_req_id"]}
        r = poll(op, shop, body["auth_req_id"])
        assert r.status_code == 200 and r.json()["id_token"], r.text
    finally:
        server.shutdown()


def test_poll_mode_on_postgresql(tmp_path):
    url = os.environ.get("TRIFACTOR_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("no PostgreSQL (run through scripts/with-postgres.sh, as make test does)")
    # A database of its own: others' tests (the bank's) share the server's default one.
    name = f"ciba_{secrets.token_hex(4)}"
    subprocess.run(["psql", url, "-q", "-c", f"CREATE DATABASE {name}"], check=True, capture_output=True)
    with running_provider("--migrate-on-start", "always", db_url=url.rsplit("/", 1)[0] + "/" + name) as provider:
        client = provider.register(name="Bank by phone", grants=CIBA, extra=["--ciba", "poll"])
        user = provider.user()
        device = Device(provider, user, tmp_path)
        body = start(provider, client, login_hint=user.email).json()
        oauth_error(poll(provider, client, body["auth_req_id"]), 400, "authorization_pending")
        first = time.monotonic()
        oauth_error(poll(provider, client, body["auth_req_id"]), 400, "slow_down")
        device.answer(body["binding_number"])
        time.sleep(max(0.0, 10.2 - (time.monotonic() - first)))
        r = poll(provider, client, body["auth_req_id"])
        assert r.status_code == 200 and r.json()["id_token"], r.text
