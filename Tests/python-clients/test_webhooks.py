"""Webhooks against a real receiver on loopback that checks every message with the Standard Webhooks
reference library (`standardwebhooks`): endpoints made with `trifactord webhooks` and the admin API,
signatures (and both of them during a rotation), personal data only where asked for, a receiver that
fails then recovers, an endpoint disabled after the retry period, the SSRF refusals, a slow receiver
that does not slow sign-ins, and kill -9 of an instance mid-delivery on SQLite and on two instances
sharing PostgreSQL: no event lost, one message at a time per endpoint, duplicates only under the same
`webhook-id` and with the same body."""

import json
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from cluster import Instance, Postgres, tmpdir
from conftest import _binary, _run, plain_http_server, wait_until

PASSWORD = "correct horse battery staple"
# Loopback receivers need private addresses allowed; a short timeout keeps leases (2 × timeout + 5 s) short.
ALLOW = ["--webhooks-allow-private", "1", "--webhooks-timeout", "2"]


class Receiver:
    """An HTTP receiver on 127.0.0.1: keeps every post (path, headers, body) and answers with the status
    fixed for its path (`by_path`), else from a script of statuses (then `default`), after `delay`
    seconds; counts the posts in flight at once. `/big` answers 200 with a megabyte."""

    def __init__(self):
        self.posts, self.lock = [], threading.Lock()
        self.script, self.default, self.delay, self.by_path = [], 204, 0.0, {}
        self.slow_first = {}  # path -> seconds the first post there is held
        self.in_flight = self.max_in_flight = 0
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                with receiver.lock:
                    receiver.in_flight += 1
                    receiver.max_in_flight = max(receiver.max_in_flight, receiver.in_flight)
                    status = receiver.by_path.get(self.path) or (
                        receiver.script.pop(0) if receiver.script else receiver.default)
                    delay = receiver.slow_first.pop(self.path, receiver.delay)
                    receiver.posts.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()},
                                           "body": body, "status": status})
                answering = False
                try:
                    time.sleep(delay)
                    # Out of flight as the answer goes: once it is sent, the sender may post the next message at
                    # once, before this thread would reach `finally` (counted there, two posts looked in flight).
                    with receiver.lock:
                        receiver.in_flight -= 1
                        answering = True
                    self.send_response(status)
                    if status == 302:
                        self.send_header("Location", receiver.url("/redirected"))
                    big = status == 200 and self.path == "/big"
                    self.send_header("Content-Length", str(1 << 20 if big else 0))
                    self.end_headers()
                    if big:
                        self.wfile.write(b"x" * (1 << 20))
                except OSError:
                    pass  # the sender was killed or gave up
                finally:
                    if not answering:
                        with receiver.lock:
                            receiver.in_flight -= 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path="/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def received(self, path="/hook") -> list:
        with self.lock:
            return [p for p in self.posts if p["path"] == path]

    def delivered(self, path="/hook") -> dict:
        """The posts answered 2xx, by webhook-id, in the order of their first arrival."""
        out = {}
        for p in self.received(path):
            if 200 <= p["status"] < 300:
                out.setdefault(p["headers"]["webhook-id"], p)
        return out

    def close(self):
        self.httpd.shutdown()


def verify(secret: str, post: dict) -> dict:
    """The body, once the reference library has checked the signature and timestamp."""
    return Webhook(secret).verify(post["body"], post["headers"])


def sign_up(base: str, email: str):
    r = requests.post(base + "/v1/accounts", json={"email": email, "password": PASSWORD}, timeout=10)
    assert r.status_code == 202, r.text


def cli(db_url: str, key_file: Path, *args) -> dict:
    out = _run([_binary(), "webhooks", *args, "--json", "--database-url", db_url, "--key-file", str(key_file), *ALLOW])
    return json.loads(out)


def admin_key(db_url: str) -> str:
    out = _run([_binary(), "admin-keys", "create", "--name", "ops", "--role", "write", "--json", "--database-url", db_url])
    return json.loads(out)["token"]


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def lone():
    """One `trifactord serve --dev` on SQLite with private webhook addresses allowed, endpoints retried for
    4 seconds only, and a write admin key."""
    tmp = tmpdir("trifactor-webhooks.")
    db = f"sqlite:{tmp / 't.db'}"
    key_file = tmp / "k.key"
    with plain_http_server(tmp, ["--dev", "--listen", "127.0.0.1:0", "--database-url", db, "--key-file", str(key_file),
                                 "--webhooks-retry-for", "4", *ALLOW]) as srv:
        yield srv, db, key_file, admin_key(db)


def test_signed_in_order_and_both_signatures_during_a_rotation(lone, receiver):
    srv, db, key_file, key = lone
    created = cli(db, key_file, "create", "--url", receiver.url(), "--events", "user.created user.sign_in_failed")
    secret = created["secret"]
    assert secret.startswith("whsec_") and "secret" not in cli(db, key_file, "show", created["id"])
    emails = [f"order{i}@example.com" for i in range(4)]
    for email in emails:
        sign_up(srv.base_url, email)
    wait_until(lambda: len(receiver.delivered()) == 4, "four messages")
    bodies = [verify(secret, p) for p in receiver.delivered().values()]
    assert [b["type"] for b in bodies] == ["user.created"] * 4
    assert all(set(b) == {"type", "timestamp", "data"} and b["data"]["user_id"] for b in bodies)
    assert [b["timestamp"] for b in bodies] == sorted(b["timestamp"] for b in bodies)
    # No personal data unless asked for: neither the address nor the browser.
    assert all("ip" not in b["data"] and "user_agent" not in b["data"] for b in bodies)

    # A rotation through the admin API: messages carry both signatures, each verifying on its own.
    r = requests.post(f"{srv.base_url}/admin/v1/webhooks/{created['id']}/rotate-secret",
                      headers={"Authorization": f"Bearer {key}"}, timeout=10)
    assert r.status_code == 200, r.text
    new = r.json()["secret"]
    assert new != secret
    requests.post(srv.base_url + "/v1/sessions", json={"email": emails[0], "password": "not the password"}, timeout=10)
    wait_until(lambda: len(receiver.delivered()) == 5, "the message after the rotation")
    last = list(receiver.delivered().values())[-1]
    assert len(last["headers"]["webhook-signature"].split(" ")) == 2
    assert verify(new, last)["type"] == "user.sign_in_failed"
    assert verify(secret, last)["type"] == "user.sign_in_failed"
    with pytest.raises(WebhookVerificationError):
        verify("whsec_" + "A" * 32, last)


def test_a_name_is_resolved_checked_and_pinned(lone, receiver):
    """`localhost` resolves to loopback addresses only (allowed here): the post goes to the checked address."""
    srv, db, key_file, _ = lone
    created = cli(db, key_file, "create", "--url", f"http://localhost:{receiver.port}/named", "--events", "user.created")
    sign_up(srv.base_url, "named@example.com")
    wait_until(lambda: receiver.delivered("/named"), "the message to localhost")
    post = receiver.received("/named")[0]
    assert post["headers"]["host"] == f"localhost:{receiver.port}"
    verify(created["secret"], post)


def test_personal_data_only_for_the_endpoint_that_asked(lone, receiver):
    srv, db, key_file, key = lone
    plain = cli(db, key_file, "create", "--url", receiver.url("/plain"), "--events", "user.sign_in_failed")
    personal = cli(db, key_file, "create", "--url", receiver.url("/personal"), "--events", "*", "--personal-data")
    sign_up(srv.base_url, "pd@example.com")
    requests.post(srv.base_url + "/v1/sessions", json={"email": "pd@example.com", "password": "nope nope nope"},
                  headers={"User-Agent": "pd-agent"}, timeout=10)
    wait_until(lambda: receiver.delivered("/plain") and len(receiver.delivered("/personal")) >= 2, "both endpoints")
    plain_body = verify(plain["secret"], list(receiver.delivered("/plain").values())[0])
    personal_bodies = [verify(personal["secret"], p) for p in receiver.delivered("/personal").values()]
    failed = [b for b in personal_bodies if b["type"] == "user.sign_in_failed"][0]
    assert failed["data"]["user_agent"] == "pd-agent" and failed["data"]["ip"] == "127.0.0.1"
    assert "user_agent" not in plain_body["data"] and "ip" not in plain_body["data"]
    # One event, one id, whichever endpoint receives it.
    failed_ids = {p["headers"]["webhook-id"] for p in receiver.delivered("/personal").values()
                  if json.loads(p["body"])["type"] == "user.sign_in_failed"}
    assert failed_ids == set(receiver.delivered("/plain"))


def test_a_failing_receiver_gets_every_message_once_it_recovers_in_order_under_the_same_ids(lone, receiver):
    srv, db, key_file, _ = lone
    created = cli(db, key_file, "create", "--url", receiver.url(), "--events", "user.created")
    receiver.script = [503, 500]
    for i in range(3):
        sign_up(srv.base_url, f"recover{i}@example.com")
    wait_until(lambda: len(receiver.delivered()) == 3, "three messages after the failures", timeout=20)
    posts = receiver.received()
    assert [p["status"] for p in posts[:3]] == [503, 500, 204]
    first = posts[0]["headers"]["webhook-id"]
    assert all(p["headers"]["webhook-id"] == first for p in posts[:3]), "the first message until it is taken"
    assert list(receiver.delivered())[0] == first
    for p in posts:
        verify(created["secret"], p)
    assert receiver.max_in_flight == 1


def test_an_endpoint_failing_for_the_retry_period_is_disabled_and_audited(lone, receiver):
    srv, db, key_file, _ = lone
    created = cli(db, key_file, "create", "--url", receiver.url(), "--events", "user.created")
    receiver.default = 503
    sign_up(srv.base_url, "down@example.com")
    wait_until(lambda: cli(db, key_file, "show", created["id"])["status"] == "disabled", "the endpoint disabled",
               timeout=20)
    shown = cli(db, key_file, "show", created["id"])
    assert "503" in shown["disabled_reason"]
    audit = _run([_binary(), "audit", "tail", "--json", "--limit", "50", "--database-url", db])
    assert "webhook.disabled" in audit
    # A disabled endpoint is sent nothing new; enabled again, it is.
    receiver.default = 204
    cli(db, key_file, "update", created["id"], "--enable")
    sign_up(srv.base_url, "down2@example.com")
    wait_until(lambda: receiver.delivered(), "the message after enabling")


def test_ssrf_refusals_and_no_redirect_followed(tmp_path, receiver):
    db = f"sqlite:{tmp_path / 't.db'}"
    key_file = tmp_path / "k.key"
    with plain_http_server(tmp_path / "srv", ["--dev", "--listen", "127.0.0.1:0", "--database-url", db,
                                              "--key-file", str(key_file)]) as srv:
        key = admin_key(db)
        for url in ["https://127.0.0.1/hook", "https://169.254.169.254/latest/meta-data", "https://10.0.0.7/hook",
                    "https://192.168.1.1/hook", "https://100.64.0.1/hook", "https://[::1]/hook", "https://[fd00::1]/hook",
                    "https://localhost/hook", "http://93.184.216.34/hook", "ftp://93.184.216.34/hook",
                    receiver.url()]:
            r = requests.post(srv.base_url + "/admin/v1/webhooks", json={"url": url, "event_types": ["*"]},
                              headers={"Authorization": f"Bearer {key}"}, timeout=10)
            assert r.status_code == 422, (url, r.text)
            assert r.headers["content-type"].startswith("application/problem+json")
            assert r.json()["invalid_params"][0]["name"] == "url"
    assert receiver.posts == []


def test_redirects_are_not_followed_and_a_slow_receiver_does_not_slow_sign_ins(lone, receiver):
    srv, db, key_file, _ = lone
    redirect = cli(db, key_file, "create", "--url", receiver.url("/moved"), "--events", "user.created")
    slow = cli(db, key_file, "create", "--url", receiver.url("/big"), "--events", "user.created")
    receiver.by_path = {"/moved": 302}
    receiver.delay = 1.5
    for i in range(3):
        started = time.monotonic()
        sign_up(srv.base_url, f"slow{i}@example.com")
        assert time.monotonic() - started < 1.0, "a sign-up waited for a webhook"
    wait_until(lambda: len(receiver.delivered("/big")) == 3, "the big answers", timeout=30)
    assert receiver.received("/redirected") == []
    audit = _run([_binary(), "audit", "tail", "--json", "--limit", "100", "--database-url", db])
    assert "webhook.delivery_failed" in audit and redirect["id"] in audit
    assert slow["id"]


def test_a_receiver_slower_than_the_timeout_is_cut_off_and_tried_again(lone, receiver):
    srv, db, key_file, _ = lone
    created = cli(db, key_file, "create", "--url", receiver.url("/slow"), "--events", "user.created")
    receiver.slow_first = {"/slow": 6.0}
    started = time.monotonic()
    sign_up(srv.base_url, "tortoise@example.com")
    assert time.monotonic() - started < 1.0, "a sign-up waited for a webhook"
    wait_until(lambda: len(receiver.received("/slow")) == 2, "the message tried again", timeout=15)
    posts = receiver.received("/slow")
    assert len(posts) == 2 and posts[0]["headers"]["webhook-id"] == posts[1]["headers"]["webhook-id"]
    # Cut off after the 2-second timeout, not when the receiver answered 6 seconds later.
    assert time.monotonic() - started < 5.5
    verify(created["secret"], posts[1])


def check_no_loss(receiver: Receiver, secret: str, expected: int):
    """Every event delivered, first arrivals in event order, duplicates under one id with one body."""
    delivered = receiver.delivered()
    assert len(delivered) == expected
    bodies = [verify(secret, p) for p in delivered.values()]
    assert [b["timestamp"] for b in bodies] == sorted(b["timestamp"] for b in bodies)
    by_id = {}
    for p in receiver.received():
        by_id.setdefault(p["headers"]["webhook-id"], set()).add(p["body"])
    assert all(len(v) == 1 for v in by_id.values()), "a duplicate under one id with another body"
    assert len(by_id) == expected, "a message with an id of its own that is not one of the events"
    assert receiver.max_in_flight == 1


def test_kill_9_mid_delivery_on_sqlite_loses_nothing(receiver):
    root = tmpdir("trifactor-webhooks-kill.")
    db = f"sqlite:{root / 't.db'}"
    try:
        a = Instance(root, "a", db, ALLOW)
        created = cli(db, root / "trifactor.key", "create", "--url", receiver.url(), "--events", "user.created")
        receiver.delay = 1.0
        for i in range(4):
            sign_up(a.base, f"k{i}@example.com")
        wait_until(lambda: receiver.in_flight == 1, "a post in flight")
        a.kill9()
        a.start()
        wait_until(lambda: len(receiver.delivered()) == 4, "every message after the restart", timeout=40)
        check_no_loss(receiver, created["secret"], 4)
        # The post cut off by the kill was sent again, under its id: the kill did land mid-delivery.
        assert len(receiver.received()) == 5
        a.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_kill_9_of_one_of_two_postgresql_instances_loses_nothing(receiver):
    root = tmpdir("trifactor-webhooks-pg.")
    pg = Postgres(root)
    a = b = None
    try:
        a = Instance(root, "a", pg.url, ALLOW)
        b = Instance(root, "b", pg.url, ALLOW)
        created = cli(pg.url, root / "trifactor.key", "create", "--url", receiver.url(), "--events", "user.created")
        receiver.delay = 0.7
        for i in range(6):
            sign_up((a if i % 2 else b).base, f"pg{i}@example.com")
        # Each instance killed once while a post is in flight (the one killed may or may not be the one
        # posting): what it had claimed is taken over by the other once the lease runs out.
        for victim in (a, b):
            wait_until(lambda: receiver.in_flight == 1, "a post in flight")
            victim.kill9()
            time.sleep(0.3)
            victim.start()
        wait_until(lambda: len(receiver.delivered()) == 6, "every message", timeout=60)
        check_no_loss(receiver, created["secret"], 6)
    finally:
        for i in (a, b):
            if i:
                i.stop()
        pg.close()
        shutil.rmtree(root, ignore_errors=True)
