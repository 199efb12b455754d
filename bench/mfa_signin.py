#!/usr/bin/env python3
"""The full multi-factor sign-in as a load: POST /v1/sessions (the password,
Argon2id) then POST /v1/sessions/mfa (a TOTP code), for many users at once.

Usage: mfa_signin.py BASE_URL OUT_FILE [--users N] [--threads N] [--seconds S]

Sets up N users first (sign-up, email verified from the dev outbox, sign-in,
TOTP enrolled), in parallel. A TOTP code works once per factor and step, so
each user (enrolled with the code of the step before) signs in twice, with
the codes of the current step and the next, in that order; N must cover the
rate times the duration divided by two. Then THREADS clients sign in for S seconds and the figures
go to OUT_FILE: `mfa_signins_per_second`, p50 and p99 of the whole sign-in,
and failures. Standard library only; trifactord must run in dev mode (for
the outbox) with its per-IP sign-in and sign-up limits raised.
"""
import argparse
import base64
import hashlib
import hmac
import http.client
import json
import struct
import threading
import time
import urllib.parse


def totp(secret_b32, step):
    key = base64.b32decode(secret_b32 + "=" * (-len(secret_b32) % 8))
    digest = hmac.new(key, struct.pack(">Q", step), hashlib.sha1).digest()
    offset = digest[-1] & 0x0F
    return "%06d" % ((struct.unpack(">I", digest[offset:offset + 4])[0] & 0x7FFFFFFF) % 1_000_000)


class Client:
    def __init__(self, base):
        url = urllib.parse.urlparse(base)
        self.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)

    def call(self, method, path, body=None, token=None):
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = "Bearer " + token
        self.conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        response = self.conn.getresponse()
        data = response.read()
        return response.status, (json.loads(data) if data else {})


def set_up(base, index, run, users, errors):
    """One user with a TOTP factor: (email, password, factor id, secret)."""
    try:
        c = Client(base)
        email, password = f"mfa{index}-{run}@example.com", f"bench-Pa55phrase-{run}-{index}"
        status, _ = c.call("POST", "/v1/accounts", {"email": email, "password": password})
        assert status == 202, f"sign-up {status}"
        status, listing = c.call("GET", "/dev/outbox?to=" + urllib.parse.quote(email))
        code = next(m["text"] for m in listing["messages"] if "verification code" in m["text"]).split("is ")[1][:6]
        status, _ = c.call("POST", "/v1/accounts/verify-email", {"email": email, "code": code})
        assert status == 200, f"verify {status}"
        status, signed = c.call("POST", "/v1/sessions", {"email": email, "password": password})
        assert status == 201, f"sign-in {status}"
        token = signed["token"]
        status, begin = c.call("POST", "/v1/mfa/enrollments", {"kind": "totp"}, token)
        assert status == 202, f"enroll {status} {begin}"
        secret = begin["secret"]
        status, done = c.call("POST", f"/v1/mfa/enrollments/{begin['enrollment_session']}",
                              {"code": totp(secret, int(time.time()) // 30 - 1)}, token)
        assert status == 201, f"finish {status} {done}"
        users[index] = (email, password, done["enrollment_id"], secret)
    except Exception as e:  # noqa: BLE001 (the count of failures is the report)
        errors.append(f"user {index}: {e}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("base")
    parser.add_argument("out")
    parser.add_argument("--users", type=int, default=800)
    parser.add_argument("--threads", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=10)
    a = parser.parse_args()
    run = str(int(time.time()))

    users, errors = [None] * a.users, []
    started = time.time()
    pending = list(range(a.users))
    lock = threading.Lock()

    def setup_worker():
        while True:
            with lock:
                if not pending:
                    return
                i = pending.pop()
            set_up(a.base, i, run, users, errors)

    workers = [threading.Thread(target=setup_worker) for _ in range(a.threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    ready = [u for u in users if u]
    if len(ready) < a.users * 0.95:
        raise SystemExit(f"mfa_signin: only {len(ready)} of {a.users} users set up: {errors[:3]}")
    setup_seconds = time.time() - started

    # Each user: its codes for the current step and the next, in that order, once each.
    queue = [(u, offset) for offset in (0, 1) for u in ready]
    latencies, failures = [], []
    deadline = time.time() + a.seconds

    def storm():
        c = Client(a.base)
        while time.time() < deadline:
            with lock:
                if not queue:
                    return
                (email, password, factor, secret), offset = queue.pop(0)
            t0 = time.time()
            status, first = c.call("POST", "/v1/sessions", {"email": email, "password": password})
            if status != 200 or not first.get("mfa_required"):
                failures.append(f"password {status}")
                continue
            step = int(time.time()) // 30 + offset
            status, second = c.call("POST", "/v1/sessions/mfa", {"pending_credential": first["pending_credential"],
                                                                 "enrollment_id": factor, "code": totp(secret, step)})
            if status != 201:
                failures.append(f"totp {status} {second.get('code')}")
                continue
            with lock:
                latencies.append(time.time() - t0)

    t0 = time.time()
    clients = [threading.Thread(target=storm) for _ in range(a.threads)]
    for c in clients:
        c.start()
    for c in clients:
        c.join()
    elapsed = time.time() - t0
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000 if latencies else float("nan")
    with open(a.out, "w") as f:
        f.write(f"mfa_signins_per_second {len(latencies) / elapsed:.2f}\n")
        f.write(f"mfa_signin_p50_ms {pick(0.50):.2f}\nmfa_signin_p99_ms {pick(0.99):.2f}\n")
        f.write(f"mfa_failures {len(failures)}\nmfa_users {len(ready)}\nmfa_setup_seconds {setup_seconds:.1f}\n")
        if failures:
            f.write(f"mfa_failure_examples {failures[:3]}\n")
    if len(queue) == 0 and time.time() < deadline:
        print("mfa_signin: ran out of users before the time was up; give more with --users", flush=True)


if __name__ == "__main__":
    main()
