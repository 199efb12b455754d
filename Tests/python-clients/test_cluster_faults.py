"""Two trifactord instances on one PostgreSQL (nginx in front), and the faults an operator meets:
limits raced across instances, kill -9 of an instance under load, PostgreSQL restarted and
stopped under load, and kill -9 of a lone SQLite instance mid-burst. Each scenario asserts what a
user would notice: answered writes are durable, counters are exact, messages go out once."""

import base64
import os
import concurrent.futures
import re
import shutil
import sqlite3
import subprocess
import time
import uuid

import pyotp
import pytest
import requests

from cluster import PGBIN, Instance, Load, Nginx, Postgres, create_api_key, free_port, tmpdir
from conftest import wait_until
from fake_providers import FakeProviders, application_key

PASSWORD = "correct horse battery staple"
# `make chaos` runs these scenarios in rounds with longer load phases (CHAOS_SECONDS).
LOAD_SECONDS = float(os.environ.get("CHAOS_SECONDS", "3"))
# Limits that would otherwise count the test's one address or one number range, not what is raced.
OPEN = ["--signin-ip-burst", "100000", "--signin-ip-rate", "100000", "--signup-ip-burst", "100000", "--signup-ip-rate", "100000",
        "--verify-ip-burst", "100000", "--verify-ip-rate", "100000", "--verify-key-burst", "100000", "--verify-key-rate", "100000",
        "--verify-country-burst", "100000", "--verify-country-rate", "100000", "--verify-budget-prefix", "100000/h,1000000/d",
        "--verify-budget-country", "100000/h,1000000/d", "--verify-budget-total", "100000/h,1000000/d",
        "--verify-conversion", "0.2,1000000,24",
        # One account signs in hundreds of times under load, and every session answered 201 must still exist.
        "--max-sessions-per-user", "10000"]


def psql(pg: Postgres, sql: str) -> list:
    out = subprocess.run([str(PGBIN / "psql"), "-h", "127.0.0.1", "-p", str(pg.port), "-U", "postgres", "-At", "-F", "|", "-c", sql],
                         check=True, capture_output=True, text=True).stdout
    return [line.split("|") for line in out.splitlines() if line]


def sign_up(base: str, email: str) -> None:
    r = requests.post(base + "/v1/accounts", json={"email": email, "password": PASSWORD}, timeout=10)
    assert r.status_code == 202, r.text
    text = wait_until(lambda: [m["text"] for m in requests.get(base + "/dev/outbox", params={"to": email}, timeout=5).json()["messages"]
                               if m["channel"] == "email"], f"the code for {email}")[0]
    code = re.search(r"(?<!\d)\d{6}(?!\d)", text).group()
    assert requests.post(base + "/v1/accounts/verify-email", json={"email": email, "code": code}, timeout=10).status_code == 200


@pytest.fixture(scope="module")
def cluster():
    root = tmpdir("trifactor-cluster.")
    pg = Postgres(root)
    app_key = root / "vonage-app.pem"
    public = application_key(app_key)
    application = str(uuid.uuid4())
    fakes = FakeProviders(vonage_key="vkey", vonage_secret="vsecret", application_id=application, public_key_pem=public)
    (root / "vonage-secret").write_text("vsecret")
    provider = (f"vonage://vkey@127.0.0.1:{fakes.port}?from=Trifactor&secret_file={root / 'vonage-secret'}"
                f"&application_id={application}&private_key_file={app_key}&voice_from=447700900001")
    extra = OPEN + ["--sms-provider", provider, "--database-pool", "8"]
    a = Instance(root, "a", pg.url, extra)   # the first creates the shared key file
    b = Instance(root, "b", pg.url, extra)
    nginx = Nginx(root, [a, b])
    key = create_api_key(pg.url)
    try:
        yield {"root": root, "pg": pg, "a": a, "b": b, "nginx": nginx, "fakes": fakes, "key": key, "extra": extra}
    finally:
        nginx.stop()
        for i in (a, b):
            i.stop()
        fakes.stop()
        pg.close()
        if not os.environ.get("CLUSTER_KEEP"):
            shutil.rmtree(root, ignore_errors=True)


def race(calls):
    """Runs the (method, url, json, headers) calls all at once; their statuses."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=32) as pool:
        return list(pool.map(lambda c: requests.request(c[0], c[1], json=c[2], headers=c[3], timeout=30).status_code, calls))


def test_limits_raced_across_two_instances_allow_exactly_what_one_would(cluster):
    a, b, pg = cluster["a"], cluster["b"], cluster["pg"]
    # 200 wrong passwords from 200 addresses, half through each instance: 5 are checked, then the lockout.
    sign_up(a.base, "raced@example.com")
    statuses = race([("POST", (a if i % 2 else b).base + "/v1/sessions", {"email": "raced@example.com", "password": f"wrong {i}"},
                      {"X-Forwarded-For": f"198.51.100.{i % 250}"}) for i in range(200)])
    assert statuses.count(401) == 5 and statuses.count(429) == 195, sorted(set(statuses))
    failures = psql(pg, "SELECT COUNT(*) FROM audit_log WHERE kind = 'signin.failed' AND user_id = "
                        "(SELECT id FROM users WHERE email = 'raced@example.com')")
    assert failures == [["5"]], failures

    # 200 wrong second-step codes at one pending sign-in: five are checked (the sign-in's budget), the fifth ends it;
    # the rest find it spent (401), past its budget (403) or the account's second step locked (429).
    sign_up(b.base, "raced-mfa@example.com")
    token = requests.post(b.base + "/v1/sessions", json={"email": "raced-mfa@example.com", "password": PASSWORD}, timeout=10).json()["token"]
    auth = {"Authorization": f"Bearer {token}"}
    started = requests.post(a.base + "/v1/mfa/enrollments", json={"kind": "totp"}, headers=auth, timeout=10).json()
    totp = pyotp.TOTP(started["secret"])
    enrolled = requests.post(b.base + f"/v1/mfa/enrollments/{started['enrollment_session']}", json={"code": totp.now()}, headers=auth,
                             timeout=10).json()
    pending = requests.post(a.base + "/v1/sessions", json={"email": "raced-mfa@example.com", "password": PASSWORD}, timeout=10).json()
    wrong = str((int(totp.now()) + 500_000) % 1_000_000).zfill(6)
    statuses = race([("POST", (a if i % 2 else b).base + "/v1/sessions/mfa",
                      {"pending_credential": pending["pending_credential"], "enrollment_id": enrolled["enrollment_id"], "code": wrong},
                      {"X-Forwarded-For": f"203.0.113.{i % 250}"}) for i in range(200)])
    assert statuses.count(400) == 4 and set(statuses) <= {400, 401, 403, 429}, sorted(set(statuses))
    checked = psql(pg, "SELECT COUNT(*) FROM audit_log WHERE kind = 'mfa.failed' AND user_id = "
                       "(SELECT id FROM users WHERE email = 'raced-mfa@example.com')")
    assert checked == [["5"]], checked
    assert requests.post(a.base + "/v1/sessions/mfa", json={"pending_credential": pending["pending_credential"],
                                                           "enrollment_id": enrolled["enrollment_id"], "code": totp.now()},
                         timeout=10).status_code in (401, 429)

    # 40 wrong checks of one phone verification: two wrong, the third ends it (410), the rest find nothing.
    auth = cluster["key"]
    r = requests.post(a.base + "/v2/verify", auth=auth, json={"brand": "Acme", "workflow": [{"channel": "sms", "to": "447400123600"}]}, timeout=10)
    assert r.status_code == 202, r.text
    request_id = r.json()["request_id"]
    with concurrent.futures.ThreadPoolExecutor(max_workers=20) as pool:
        statuses = list(pool.map(lambda i: requests.post((a if i % 2 else b).base + f"/v2/verify/{request_id}", auth=auth,
                                                         json={"code": "000000"}, timeout=30).status_code, range(40)))
    assert statuses.count(400) == 2 and statuses.count(410) == 1 and statuses.count(404) == 37, sorted(statuses)


def test_kill_9_of_one_instance_under_load_loses_no_answered_write_and_sends_each_message_once(cluster):
    a, b, nginx, pg, fakes = cluster["a"], cluster["b"], cluster["nginx"], cluster["pg"], cluster["fakes"]
    for n in range(4):
        sign_up(nginx.base, f"load{n}@example.com")
    run = uuid.uuid4().hex[:6]

    def work(i):
        kind = i % 3
        if kind == 0:
            r = requests.post(nginx.base + "/v1/sessions", json={"email": f"load{i % 4}@example.com", "password": PASSWORD}, timeout=15)
            return ("signin", r.status_code, r.json().get("token") if r.status_code == 201 else None)
        if kind == 1:
            number = f"4474009{i:05d}"
            # A text, then a call when the 15 s step runs out: the call is a timer firing.
            try:
                r = requests.post(nginx.base + "/v2/verify", auth=cluster["key"], timeout=15, headers={"Idempotency-Key": f"{run}-{number}"},
                                  json={"brand": "Acme", "channel_timeout": 15,
                                        "workflow": [{"channel": "sms", "to": number}, {"channel": "voice", "to": number}]})
            except requests.RequestException as e:
                return ("verify", type(e).__name__, None, number)
            return ("verify", r.status_code, r.json().get("request_id") if r.status_code == 202 else None, number)
        email = f"new-{run}-{i}@example.com"
        r = requests.post(nginx.base + "/v1/accounts", json={"email": email, "password": PASSWORD}, timeout=15)
        return ("signup", r.status_code, email)

    load = Load(work, threads=8)
    time.sleep(2)
    a.kill9()
    time.sleep(LOAD_SECONDS)
    results = [r for _, r in load.stop()]
    a.start()  # back for the next scenarios

    answered = [r for r in results if not isinstance(r[1], str) and 200 <= r[1] < 300]
    cut = [r for r in results if r[0] == "error" or r[1] in (502, 504) or isinstance(r[1], str)]
    assert len(answered) > 50, f"too little traffic went through: {results[:10]}"
    # Every 2xx is durable.
    for kind, status, *rest in answered:
        if kind == "signin":
            assert requests.get(b.base + "/v1/session", headers={"Authorization": f"Bearer {rest[0]}"}, timeout=10).status_code == 200
    verified = {r[2]: r[3] for r in answered if r[0] == "verify"}
    # A start cut off mid-way is retried with its Idempotency-Key: the first request's answer again if it
    # committed (Idempotent-Replayed), a fresh start if it never did; either way one request and one text.
    replayed = 0
    for r in results:
        if r[0] == "verify" and (r[1] in (502, 504) or isinstance(r[1], str)):
            retry = requests.post(nginx.base + "/v2/verify", auth=cluster["key"], timeout=15, headers={"Idempotency-Key": f"{run}-{r[3]}"},
                                  json={"brand": "Acme", "channel_timeout": 15,
                                        "workflow": [{"channel": "sms", "to": r[3]}, {"channel": "voice", "to": r[3]}]})
            assert retry.status_code == 202, retry.text
            replayed += retry.headers.get("Idempotent-Replayed") == "true"
            verified[retry.json()["request_id"]] = r[3]
    rows = dict(psql(pg, "SELECT id, 1 FROM verify_requests"))
    assert all(request_id in rows for request_id in verified), "a verification answered 202 is missing"
    per_number = psql(pg, "SELECT COUNT(*) FROM verify_requests WHERE steps LIKE '%4474009%' GROUP BY steps HAVING COUNT(*) > 1")
    assert per_number == [], "a number got two verification requests"
    emails = {r[2] for r in answered if r[0] == "signup"}
    users = {row[0] for row in psql(pg, "SELECT email FROM users")}
    assert emails <= users, "a sign-up answered 202 is missing"
    # Every text of an answered start goes out (the dead instance's lease runs out after 30 s), and once.
    numbers = set(verified.values())

    def settled():
        left = psql(pg, "SELECT COUNT(*) FROM outbox WHERE status IN ('pending', 'sending', 'held')")
        return left == [["0"]]
    wait_until(settled, "every text and every call (after its 15 s step) to go out", timeout=90)
    sent = [f["to"] for f in fakes.sent("vonage", "sms") if f["to"] in numbers]
    calls = [f["to"][0]["number"] for f in fakes.sent("vonage", "voice") if f["to"][0]["number"] in numbers]
    duplicates = len(sent) - len(set(sent)) + len(calls) - len(set(calls))
    assert set(sent) == numbers, f"{len(numbers - set(sent))} texts never arrived"
    # Each step's timer fired once, on one instance or the other: one call per number.
    assert set(calls) == numbers, f"{len(numbers - set(calls))} calls never placed"
    # A message the killed instance handed to the provider but had not yet marked sent is sent again
    # by the other: the dispatcher holds one message at a time, so at most one.
    assert duplicates <= 1, f"{duplicates} messages sent twice"
    histogram = {}
    for r in results:
        histogram[f"{r[0]} {r[1]}"] = histogram.get(f"{r[0]} {r[1]}", 0) + 1
    print(f"kill -9 under load: {len(results)} requests, {len(answered)} answered 2xx, {len(cut)} cut off, "
          f"{len(numbers)} texts and {len(calls)} calls, {duplicates} sent twice, {replayed} retried starts replayed; "
          f"{dict(sorted(histogram.items()))}")


def test_postgres_restarted_and_stopped_under_load_gives_503s_then_recovers_without_a_restart(cluster):
    a, b, nginx, pg = cluster["a"], cluster["b"], cluster["nginx"], cluster["pg"]
    a.wait_ready()
    sign_up(nginx.base, "restart@example.com")

    def work(i):
        started = time.monotonic()
        r = requests.post((a if i % 2 else b).base + "/v1/sessions", json={"email": "restart@example.com", "password": PASSWORD}, timeout=30)
        return (r.status_code, r.headers.get("Retry-After"), r.headers.get("Content-Type", ""), time.monotonic() - started,
                r.json().get("token") if r.status_code == 201 else r.json().get("code"))

    load = Load(work, threads=4)
    time.sleep(1)
    pg.restart()
    time.sleep(2)
    pg.stop()
    time.sleep(3)
    ready = [requests.get(i.base + "/ready", timeout=5).status_code for i in (a, b)]
    time.sleep(17)  # 20 s down in all
    pg.start()
    wait_until(lambda: all(requests.get(i.base + "/ready", timeout=5).status_code == 200 for i in (a, b)), "both instances ready again", 20)
    time.sleep(1)
    results = [r for _, r in load.stop()]

    assert ready == [503, 503], ready
    statuses = {r[0] for r in results}
    # A sign-in cut off by the outage after its attempt was counted stays counted (it cannot be told from a
    # guess whose answer was lost), so one account hammered through the outage meets its lockout delay.
    assert 500 not in statuses and statuses <= {201, 429, 503}, {(r[0], r[4]) for r in results if r[0] != 201}
    assert all(r[4] == "too_many_attempts" and r[1] for r in results if r[0] == 429)
    unavailable = [r for r in results if r[0] == 503]
    assert unavailable and all(r[1] and r[2].startswith("application/problem+json") for r in unavailable), unavailable[:3]
    assert max(r[3] for r in results) < 15, "a request hung past its bound"
    # Both instances serve again (once the lockout delay is over), and every session answered 201 exists.
    retry = max([int(r[1]) for r in results if r[0] == 429] or [0])
    time.sleep(min(retry, 30))
    for instance in (a, b):
        r = requests.post(instance.base + "/v1/sessions", json={"email": "restart@example.com", "password": PASSWORD}, timeout=10)
        assert r.status_code == 201, r.text
    for r in results:
        if r[0] == 201:
            assert requests.get(nginx.base + "/v1/session", headers={"Authorization": f"Bearer {r[4]}"}, timeout=10).status_code == 200
    print(f"PostgreSQL restart and 20 s stop: {len(results)} sign-ins, {sum(r[0] == 201 for r in results)} 201, "
          f"{len(unavailable)} 503 with Retry-After, slowest {max(r[3] for r in results):.1f} s")


def test_kill_9_of_a_lone_sqlite_instance_mid_burst_leaves_an_intact_database(tmp_path):
    db = tmp_path / "t.db"
    instance = Instance(tmp_path, "solo", f"sqlite:{db}", OPEN + ["--test-numbers", ",".join(f"4474001{n:05d}=1234" for n in range(400))])
    key = create_api_key(f"sqlite:{db}")

    def work(i):
        if i % 2:
            r = requests.post(instance.base + "/v1/accounts", json={"email": f"burst{i}@example.com", "password": PASSWORD}, timeout=15)
            return ("signup", r.status_code, f"burst{i}@example.com")
        r = requests.post(instance.base + "/v2/verify", auth=key, timeout=15,
                          json={"brand": "Acme", "workflow": [{"channel": "sms", "to": f"4474001{i % 400:05d}"}]})
        return ("verify", r.status_code, r.json().get("request_id") if r.status_code == 202 else None)

    load = Load(work, threads=6)
    time.sleep(1.5)
    instance.kill9()
    results = [r for _, r in load.stop()]
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        users = {row[0] for row in conn.execute("SELECT email FROM users")}
        requests_ = {row[0] for row in conn.execute("SELECT id FROM verify_requests")}
    answered = [r for r in results if r[1] in (202,)]
    assert len(answered) > 10
    assert {r[2] for r in answered if r[0] == "signup"} <= users
    assert {r[2] for r in answered if r[0] == "verify"} <= requests_
    instance.start()  # and it starts again on that file
    assert requests.get(instance.base + "/ready", timeout=5).status_code == 200
    instance.stop()


class Device:
    """A device key (P-256, in this process) enrolled as a user's push factor, polling like TrifactorKit's DeviceAuthenticator."""

    def __init__(self, base: str, token: str):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        self.key = ec.generate_private_key(ec.SECP256R1())
        spki = self.key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        auth = {"Authorization": f"Bearer {token}"}
        started = requests.post(base + "/v1/mfa/enrollments", headers=auth, timeout=10,
                                json={"kind": "device", "public_key": base64.b64encode(spki).decode(), "device_name": "phone"})
        assert started.status_code == 202, started.text
        body = started.json()
        done = requests.post(base + f"/v1/mfa/enrollments/{body['enrollment_session']}", headers=auth, timeout=10,
                             json={"signature": self.sign("enroll", body["challenge"])})
        assert done.status_code == 201, done.text
        self.id = done.json()["enrollment_id"]

    def sign(self, purpose: str, challenge: str, action: str = "-") -> str:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        message = f"trifactor-device-signature-v1\npurpose: {purpose}\nchallenge: {challenge}\naction: {action}".encode()
        return base64.b64encode(self.key.sign(message, ec.ECDSA(hashes.SHA256()))).decode()

    def headers(self) -> dict:
        """The signed headers that say a request comes from this device now."""
        now = str(int(time.time()))
        return {"X-Trifactor-Device-Time": now, "X-Trifactor-Device-Signature": self.sign("poll", f"{self.id}:{now}")}

    def poll(self, base: str, wait: int = 25):
        """One long poll; None when the connection was cut (the caller polls again, as the SDK does)."""
        try:
            r = requests.get(base + f"/v1/devices/{self.id}/approvals", params={"wait": wait}, headers=self.headers(), timeout=wait + 10)
        except requests.RequestException:
            return None
        return r.json()["approvals"] if r.status_code == 200 else None


def test_an_instance_dying_during_long_polls_leaves_the_device_and_the_browser_to_finish_on_the_other(cluster):
    a, b, nginx = cluster["a"], cluster["b"], cluster["nginx"]
    a.wait_ready()
    b.wait_ready()
    email = f"push-{uuid.uuid4().hex[:6]}@example.com"
    sign_up(nginx.base, email)
    token = requests.post(nginx.base + "/v1/sessions", json={"email": email, "password": PASSWORD}, timeout=10).json()["token"]
    device = Device(nginx.base, token)
    for victim, survivor in ((a, b), (b, a)):
        seen = []
        reconnects = []

        deadline = time.monotonic() + 60

        def device_loop():
            while not seen and time.monotonic() < deadline:
                approvals = device.poll(nginx.base)
                if approvals is None:
                    reconnects.append(time.monotonic())
                    time.sleep(0.2)
                elif approvals:
                    seen.extend(approvals)

        poller = concurrent.futures.ThreadPoolExecutor(max_workers=2)
        polling = poller.submit(device_loop)
        time.sleep(1)  # the device's long poll is held by one of the two
        victim.kill9()
        # A passwordless push sign-in, made on the survivor while the victim is gone.
        started = requests.post(survivor.base + "/v1/sessions/push", json={"email": email}, timeout=10)
        assert started.status_code == 202, started.text
        start = started.json()

        def browser_wait():
            while time.monotonic() < deadline:
                try:
                    r = requests.get(nginx.base + f"/v1/mfa/sign-in/approvals/{start['approval_id']}", params={"wait": 25},
                                     headers={"X-Trifactor-Pending-Credential": start["pending_credential"]}, timeout=35)
                    if r.status_code == 200 and r.json()["status"] != "pending":
                        return r.json()["status"]
                except requests.RequestException:
                    time.sleep(0.2)
            return "still waiting at the deadline"

        waiting = poller.submit(browser_wait)
        polling.result(timeout=70)
        assert seen, "the device never saw the push"
        approval = seen[0]
        assert approval["approval_id"] == start["approval_id"] and start["number"] in approval["choices"]
        decided = requests.post(nginx.base + f"/v1/devices/{device.id}/approvals/{approval['approval_id']}", timeout=10, headers=device.headers(),
                                json={"decision": "approve", "number": start["number"],
                                      "signature": device.sign("push", approval["approval_id"], f"approve:{start['number']}")})
        assert decided.status_code == 200 and decided.json()["status"] == "approved", decided.text
        assert waiting.result(timeout=70) == "approved"
        done = requests.post(nginx.base + "/v1/sessions/push/complete", timeout=10,
                             json={"pending_credential": start["pending_credential"], "approval_id": start["approval_id"]})
        assert done.status_code == 201, done.text
        poller.shutdown()
        victim.start()
        print(f"{victim.name} killed during the long polls: the device saw the push after {len(reconnects)} reconnect(s); "
              "the browser's wait completed")


def test_an_instance_20_seconds_ahead_agrees_with_the_others_on_codes_sessions_and_devices(cluster):
    a, pg = cluster["a"], cluster["pg"]
    a.wait_ready()
    # Configured as the others are, but for its clock.
    ahead = Instance(cluster["root"], "ahead", pg.url, cluster["extra"] + ["--clock-offset", "20"])
    try:
        # An email code issued by one clock is checked by the other.
        email = f"skew-{uuid.uuid4().hex[:6]}@example.com"
        assert requests.post(a.base + "/v1/accounts", json={"email": email, "password": PASSWORD}, timeout=10).status_code == 202
        text = wait_until(lambda: [m["text"] for m in requests.get(a.base + "/dev/outbox", params={"to": email}, timeout=5).json()["messages"]], "the code")[0]
        code = re.search(r"(?<!\d)\d{6}(?!\d)", text).group()
        assert requests.post(ahead.base + "/v1/accounts/verify-email", json={"email": email, "code": code}, timeout=10).status_code == 200
        # A session made ahead is valid behind, and the other way round.
        token = requests.post(ahead.base + "/v1/sessions", json={"email": email, "password": PASSWORD}, timeout=10).json()["token"]
        assert requests.get(a.base + "/v1/session", headers={"Authorization": f"Bearer {token}"}, timeout=10).status_code == 200
        # TOTP enrolled behind, its next code accepted ahead (one step either side of now).
        auth = {"Authorization": f"Bearer {token}"}
        started = requests.post(a.base + "/v1/mfa/enrollments", json={"kind": "totp"}, headers=auth, timeout=10).json()
        totp = pyotp.TOTP(started["secret"])
        enrolled = requests.post(a.base + f"/v1/mfa/enrollments/{started['enrollment_session']}", json={"code": totp.now()}, headers=auth,
                                 timeout=10).json()
        pending = requests.post(ahead.base + "/v1/sessions", json={"email": email, "password": PASSWORD}, timeout=10).json()
        done = requests.post(ahead.base + "/v1/sessions/mfa", timeout=10, json={"pending_credential": pending["pending_credential"],
                                                                               "enrollment_id": enrolled["enrollment_id"], "code": totp.at(time.time() + 30)})
        assert done.status_code == 201, done.text
        # A device signing with the true time is fresh for both (30 s of tolerance).
        device = Device(a.base, done.json()["token"])
        for instance in (a, ahead):
            assert device.poll(instance.base, wait=0) == [], instance.name
        # A phone code started ahead is checked behind.
        key = cluster["key"]
        r = requests.post(ahead.base + "/v2/verify", auth=key, json={"brand": "Acme", "workflow": [{"channel": "sms", "to": "447400123601"}]},
                          timeout=10)
        assert r.status_code == 202, r.text
        sms = wait_until(lambda: cluster["fakes"].sent("vonage", "sms", "447400123601"), "the text")[0]
        code = re.search(r"(?<!\d)\d{4,10}(?!\d)", sms["text"]).group()
        assert requests.post(a.base + f"/v2/verify/{r.json()['request_id']}", auth=key, json={"code": code}, timeout=10).status_code == 200
    finally:
        ahead.stop()


def test_a_bank_transfer_confirmed_while_an_instance_dies_moves_money_once_and_the_ledger_balances(cluster, browser, tmp_path):
    from playwright.sync_api import expect
    from test_bank_browser import Bank, _start_bank, approval_form, open_account, transfer_form

    a, b, nginx = cluster["a"], cluster["b"], cluster["nginx"]
    a.wait_ready()
    b.wait_ready()
    process, url = _start_bank(nginx.port, tmp_path, "cluster-bank")
    bank = Bank(nginx.port, url)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        open_account(page, bank, "cluster-bank@example.com", picture="sun", phrase="bright morning")
        transfer_form(page, "DE89 3704 0044 0532 0130 00", "250.00")
        page.get_by_role("button", name="Review transfer").click()
        page.get_by_role("button", name="Confirm transfer").click()
        expect(page.get_by_text("Confirm transfer of EUR 250.00 to Alice Example")).to_be_visible()
        code, form = approval_form(page, bank)
        # The instance that may have sent the code dies; the approval and the spend go to the other.
        a.kill9()
        page.get_by_label("Code").fill(code)
        page.get_by_role("button", name="Confirm and send").click()
        expect(page.get_by_text("Sent EUR 250.00 to Alice Example")).to_be_visible()
        expect(page.get_by_text("EUR 2,250.00")).to_be_visible()
        again = page.request.post(bank.url + "/transfer/approve", form=form, max_redirects=0)
        assert again.status == 409 and "Nothing was moved" in again.text()
        with sqlite3.connect(tmp_path / "cluster-bank.db") as db:
            assert db.execute("SELECT COUNT(*) FROM bank_transfers WHERE payee_name = 'Alice Example'").fetchone() == (1,)
            # Double entry: every transfer's entries sum to zero, every balance is its entries, all balances sum to zero.
            assert db.execute("SELECT COUNT(*) FROM (SELECT transfer_id FROM bank_entries GROUP BY transfer_id HAVING SUM(amount) != 0)").fetchone() == (0,)
            assert db.execute("""SELECT COUNT(*) FROM bank_accounts a WHERE a.balance !=
                                 (SELECT COALESCE(SUM(amount), 0) FROM bank_entries e WHERE e.account_id = a.id)""").fetchone() == (0,)
            assert db.execute("SELECT SUM(balance) FROM bank_accounts").fetchone() == (0,)
    finally:
        context.close()
        process.kill()
        a.start()
