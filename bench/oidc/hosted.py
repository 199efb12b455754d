#!/usr/bin/env python3
"""Sign-ins through trifactord's hosted pages, as a browser and its relying
party make them: GET /authorize, the email page, the password page, the
second-factor page when the user has one, then POST /token with the code.

Usage:
  hosted.py families BASE OUT_FILE --count N --client ID --secret S
      N users without a second factor, each signed in once with
      `openid offline_access`: their refresh tokens, one a line, in OUT_FILE
      (each the start of its own refresh-token family).
  hosted.py grants BASE TOKEN_FILE --client ID --secret S --count K [--kind refresh_token|client_credentials]
      K grants one after another on one connection: refresh-token grants from
      the first token of TOKEN_FILE (rotated in order), or client_credentials
      (scope reports). For counting the database statements a grant makes.
  hosted.py signin BASE OUT_FILE --client ID --secret S [--users N] [--threads N] [--seconds S]
      N users with an authenticator app (TOTP), set up as bench/mfa_signin.py
      does; then THREADS browsers sign in for S seconds, each sign-in a new
      browser (no cookies) on a new connection. The figures go to OUT_FILE:
      `hosted_signins_per_second`, p50 and p99 of the whole sign-in, failures.

Each browser connects from its own loopback address (127.x.y.z): the hosted
pages allow 30 new flows per client address, then one every 2 seconds, and
one address for all would measure that limit. Standard library only;
trifactord runs in dev mode (the outbox) with its per-IP sign-in and sign-up
limits raised.
"""
import argparse
import base64
import hashlib
import html.parser
import http.client
import itertools
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from mfa_signin import Client, set_up, totp  # noqa: E402  (bench/mfa_signin.py)

REDIRECT = "http://127.0.0.1:9/cb"
_addresses = itertools.count(1)
_address_lock = threading.Lock()


def next_address():
    """A loopback address of its own for each browser: 127.1.0.1, 127.1.0.2, …"""
    with _address_lock:
        n = next(_addresses)
    return f"127.{1 + (n >> 16) % 254}.{(n >> 8) & 255}.{n & 255 or 1}"


class Hidden(html.parser.HTMLParser):
    """The hidden inputs of a page (flow, csrf, factor), the first of each name."""

    def __init__(self):
        super().__init__()
        self.fields = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "input" and a.get("type") == "hidden" and a.get("name"):
            self.fields.setdefault(a["name"], a.get("value") or "")


class Browser:
    """One browser: a connection from its own address and a cookie jar."""

    def __init__(self, base):
        url = urllib.parse.urlparse(base)
        self.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30,
                                               source_address=(next_address(), 0))
        self.cookies = {}

    def call(self, method, path, form=None, headers=None):
        h = dict(headers or {})
        if self.cookies:
            h["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if form is not None:
            body = urllib.parse.urlencode(form)
            h["Content-Type"] = "application/x-www-form-urlencoded"
        self.conn.request(method, path, body=body, headers=h)
        r = self.conn.getresponse()
        data = r.read()
        for name, value in r.getheaders():
            if name.lower() == "set-cookie":
                k, _, rest = value.partition("=")
                v = rest.split(";", 1)[0]
                if "Max-Age=0" in value or not v:
                    self.cookies.pop(k, None)
                else:
                    self.cookies[k] = v
        return r.status, r.getheader("Location") or "", data

    def page(self, path):
        """GET a page: its hidden fields."""
        status, location, data = self.call("GET", path)
        if status != 200:
            raise RuntimeError(f"GET {path.split('?')[0]} {status} {location}")
        p = Hidden()
        p.feed(data.decode("utf-8", "replace"))
        return p.fields

    def close(self):
        self.conn.close()


def path_of(location):
    u = urllib.parse.urlparse(location)
    return u.path + ("?" + u.query if u.query else "")


def sign_in(base, client, secret, email, password, code_for=None):
    """One hosted sign-in and its code exchange: the token endpoint's JSON."""
    b = Browser(base)
    try:
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        query = urllib.parse.urlencode({
            "response_type": "code", "client_id": client, "redirect_uri": REDIRECT,
            "scope": "openid offline_access", "state": "s", "nonce": secrets.token_urlsafe(8),
            "code_challenge": challenge, "code_challenge_method": "S256"})
        status, location, _ = b.call("GET", "/authorize?" + query)
        if status != 303 or "/authorize/sign-in" not in location:
            raise RuntimeError(f"authorize {status} {location}")
        fields = b.page(path_of(location))
        status, location, _ = b.call("POST", "/authorize/sign-in",
                                     {"flow": fields["flow"], "csrf": fields["csrf"], "email": email})
        if status != 303 or "/authorize/password" not in location:
            raise RuntimeError(f"email {status} {location}")
        fields = b.page(path_of(location))
        status, location, _ = b.call("POST", "/authorize/password",
                                     {"flow": fields["flow"], "csrf": fields["csrf"], "password": password})
        if status != 303:
            raise RuntimeError(f"password {status}")
        if "/authorize/second-factor" in location:
            if code_for is None:
                raise RuntimeError("a second factor was asked for")
            fields = b.page(path_of(location))
            status, location, _ = b.call("POST", "/authorize/second-factor", {
                "flow": fields["flow"], "csrf": fields["csrf"], "factor": fields["factor"], "code": code_for()})
            if status != 303:
                raise RuntimeError(f"second factor {status}")
        if not location.startswith(REDIRECT):
            raise RuntimeError(f"no code: {location[:80]}")
        code = urllib.parse.parse_qs(urllib.parse.urlparse(location).query).get("code", [""])[0]
        basic = base64.b64encode(f"{client}:{secret}".encode()).decode()
        status, _, data = b.call("POST", "/token", {
            "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "code_verifier": verifier},
            headers={"Authorization": "Basic " + basic})
        if status != 200:
            raise RuntimeError(f"token {status} {data[:120]!r}")
        return json.loads(data)
    finally:
        b.close()


def password_user(base, index, run):
    """A user with a password only (sign-up, email verified from the dev outbox)."""
    c = Client(base)
    email, password = f"family{index}-{run}@example.com", f"bench-Pa55phrase-{run}-{index}"
    status, _ = c.call("POST", "/v1/accounts", {"email": email, "password": password})
    assert status == 202, f"sign-up {status}"
    _, listing = c.call("GET", "/dev/outbox?to=" + urllib.parse.quote(email))
    code = next(m["text"] for m in listing["messages"] if "verification code" in m["text"]).split("is ")[1][:6]
    status, _ = c.call("POST", "/v1/accounts/verify-email", {"email": email, "code": code})
    assert status == 200, f"verify {status}"
    return email, password


def in_parallel(n, threads, work):
    """work(i) for i in 0..n-1 on THREADS threads; the exceptions, as text."""
    pending, lock, errors = list(range(n)), threading.Lock(), []

    def worker():
        while True:
            with lock:
                if not pending:
                    return
                i = pending.pop()
            try:
                work(i)
            except Exception as e:  # noqa: BLE001 (the failures are the report)
                errors.append(f"{i}: {e}")

    ts = [threading.Thread(target=worker) for _ in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return errors


def families(a):
    run = str(int(time.time() * 1000))
    tokens = [None] * a.count

    def one(i):
        email, password = password_user(a.base, i, run)
        answer = sign_in(a.base, a.client, a.secret, email, password)
        tokens[i] = answer["refresh_token"]

    errors = in_parallel(a.count, 8, one)
    if errors:
        raise SystemExit(f"hosted: {len(errors)} of {a.count} families failed: {errors[:3]}")
    with open(a.out, "w") as f:
        f.write("".join(t + "\n" for t in tokens))


def signin(a):
    run = str(int(time.time()))
    users, errors = [None] * a.users, []
    started = time.time()
    failed = in_parallel(a.users, a.threads, lambda i: set_up(a.base, i, run, users, errors))
    ready = [u for u in users if u]
    if len(ready) < a.users * 0.95:
        raise SystemExit(f"hosted: only {len(ready)} of {a.users} users set up: {(errors + failed)[:3]}")
    setup_seconds = time.time() - started

    # A TOTP code works once per factor and step: each user signs in with the current step's code, then the next's.
    queue = [(u, offset) for offset in (0, 1) for u in ready]
    lock = threading.Lock()
    latencies, failures = [], []
    deadline = time.time() + a.seconds

    def browser():
        while time.time() < deadline:
            with lock:
                if not queue:
                    return
                (email, password, _factor, secret), offset = queue.pop(0)
            t0 = time.time()
            try:
                sign_in(a.base, a.client, a.secret, email, password,
                        code_for=lambda: totp(secret, int(time.time()) // 30 + offset))
            except Exception as e:  # noqa: BLE001
                failures.append(str(e)[:160])
                continue
            with lock:
                latencies.append(time.time() - t0)

    # The CPU seconds of this load generator, of trifactord and of its database over the sign-ins alone: on two
    # shared cores, what the load generator takes is CPU the server's Argon2id cannot have.
    watched = {"server": a.server_pids, "db": a.db_pids}
    before = {k: cpu_seconds(v) for k, v in watched.items()}
    c0 = time.process_time()
    t0 = time.time()
    ts = [threading.Thread(target=browser) for _ in range(a.threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    elapsed = time.time() - t0
    client_cpu = time.process_time() - c0
    used = {k: cpu_seconds(v) - before[k] for k, v in watched.items()}
    latencies.sort()

    def pick(q):
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else float("nan")

    with open(a.out, "w") as f:
        f.write(f"hosted_signins_per_second {len(latencies) / elapsed:.2f}\n")
        f.write(f"hosted_signin_p50_ms {pick(0.50):.2f}\nhosted_signin_p99_ms {pick(0.99):.2f}\n")
        f.write(f"hosted_failures {len(failures)}\nhosted_users {len(ready)}\nhosted_setup_seconds {setup_seconds:.1f}\n")
        f.write(f"hosted_signins {len(latencies)}\nhosted_elapsed {elapsed:.2f}\nhosted_client_cpu {client_cpu:.2f}\n")
        f.write(f"hosted_server_cpu {used['server']:.2f}\nhosted_db_cpu {used['db']:.2f}\n")
        if failures:
            f.write(f"hosted_failure_examples {failures[:3]}\n")
    if not queue and time.time() < deadline:
        print("hosted: ran out of users before the time was up; give more with --users", flush=True)


def cpu_seconds(pids):
    """CPU seconds so far of `pids` (space-separated) and their descendants (bench/oidc/cpu.py); 0 for none."""
    if not pids.split():
        return 0.0
    import subprocess
    out = subprocess.run([sys.executable, os.path.join(os.path.dirname(os.path.abspath(__file__)), "cpu.py"),
                          *pids.split()], capture_output=True, text=True, check=True).stdout
    return float(out.strip() or 0)


def grants(a):
    url = urllib.parse.urlparse(a.base)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers = {"Authorization": "Basic " + base64.b64encode(f"{a.client}:{a.secret}".encode()).decode(),
               "Content-Type": "application/x-www-form-urlencoded"}
    token = open(a.out).readline().strip()
    cc = a.kind == "client_credentials"
    for _ in range(a.count):
        body = "grant_type=client_credentials&scope=reports" if cc else f"grant_type=refresh_token&refresh_token={token}"
        conn.request("POST", "/token", body=body, headers=headers)
        r = conn.getresponse()
        data = r.read()
        if r.status != 200:
            raise SystemExit(f"hosted: grant answered {r.status} {data[:120]!r}")
        if not cc:
            token = json.loads(data)["refresh_token"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["families", "grants", "signin"])
    p.add_argument("base")
    p.add_argument("out")
    p.add_argument("--client", required=True)
    p.add_argument("--secret", required=True)
    p.add_argument("--count", type=int, default=16)
    p.add_argument("--kind", default="refresh_token", choices=["refresh_token", "client_credentials"])
    p.add_argument("--users", type=int, default=500)
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--server-pids", default="", help="trifactord's pid (signin: its CPU seconds are reported)")
    p.add_argument("--db-pids", default="", help="the database's pids (signin: their CPU seconds are reported)")
    a = p.parse_args()
    {"families": families, "grants": grants, "signin": signin}[a.mode](a)


if __name__ == "__main__":
    main()
