#!/usr/bin/env python3
"""Probes of work an anonymous caller can make trifactord do, each against a baseline measured
in the same run, interleaved sample by sample so both see the same moment of the machine:

  resend    POST /v1/accounts/verify-email/resend for an unverified account against an unknown
            address: the ratio of their median latencies (1.00: the answer tells them apart by
            nothing; a security review measured 0.9 ms against 0.6 ms, 1.5x, before resends were queued).
  reset     POST /v1/accounts/password-reset for an account against an unknown address (1.00: the
            same answer in the same time).
  keyed     POST /v1/mfa/sign-in/challenges with the largest body a keyed request may carry (60
            members, about 120 of the 128 counted), with a fresh Idempotency-Key against without
            one (the key's claim is a database write either way); a 64 KiB body of 5,000 members
            (refused with 413 when keyed) against the same body without a key (a security review
            measured 170 ms against 4 ms before keyed bodies were bounded and compared through
            JSONDecoder); and what the largest body adds to a keyed request over the smallest.

Usage: bench/probes.py [TRIFACTORD] (default .build/release/trifactord). Prints a table; exits
non-zero only when something failed.
"""
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

BINARY = sys.argv[1] if len(sys.argv) > 1 else ".build/release/trifactord"
SAMPLES = int(os.environ.get("PROBE_SAMPLES", "400"))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start():
    tmp = tempfile.mkdtemp(prefix="trifactor-probes.")
    port = free_port()
    env = dict(os.environ, TRIFACTOR_SIGNUP_IP_BURST="1000000", TRIFACTOR_SIGNUP_IP_RATE="1000000",
               TRIFACTOR_SIGNIN_IP_BURST="1000000", TRIFACTOR_SIGNIN_IP_RATE="1000000", TRIFACTOR_DEV="1")
    process = subprocess.Popen([BINARY, "serve", "--listen", f"127.0.0.1:{port}", "--database-url", f"sqlite:{tmp}/p.db",
                                "--key-file", f"{tmp}/p.key"], env=env, stdout=subprocess.DEVNULL, stderr=open(f"{tmp}/log", "w"))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            c.request("GET", "/health")
            if c.getresponse().status == 200:
                return process, port
        except OSError:
            time.sleep(0.1)
    process.kill()
    sys.exit(f"probes: trifactord did not start (log in {tmp}/log)")


class Client:
    def __init__(self, port):
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def post(self, path, body, headers=None):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        started = time.perf_counter()
        self.conn.request("POST", path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
        r = self.conn.getresponse()
        r.read()
        return r.status, time.perf_counter() - started


def interleaved(a, b, samples):
    """Medians (ms) of a() and b(), run alternately; each returns (status, seconds)."""
    times_a, times_b, statuses = [], [], set()
    for _ in range(samples):
        for f, times in ((a, times_a), (b, times_b)):
            status, seconds = f()
            statuses.add(status)
            times.append(seconds)
    return statistics.median(times_a) * 1000, statistics.median(times_b) * 1000, statuses


def main():
    process, port = start()
    client = Client(port)
    try:
        # Unverified accounts, each resent to at most three times (the per-address burst).
        accounts = [f"unverified-{i}@example.com" for i in range(SAMPLES // 3 + 1)]
        for email in accounts:
            status, _ = client.post("/v1/accounts", {"email": email, "password": "correct horse battery staple"})
            assert status == 202, status
        turn = iter([a for a in accounts for _ in range(3)])
        unverified = lambda: client.post("/v1/accounts/verify-email/resend", {"email": next(turn)})
        unknown = lambda: client.post("/v1/accounts/verify-email/resend", {"email": f"nobody-{uuid.uuid4().hex}@example.com"})
        for _ in range(50):  # warm up
            client.post("/v1/accounts/verify-email/resend", {"email": f"warm-{uuid.uuid4().hex}@example.com"})
        known_ms, unknown_ms, statuses = interleaved(unverified, unknown, SAMPLES)
        assert statuses == {202}, statuses
        rows = [("resend: unverified account / unknown address", known_ms, unknown_ms)]
        turn = iter([a for a in accounts for _ in range(3)])
        account = lambda: client.post("/v1/accounts/password-reset", {"email": next(turn)})
        stranger = lambda: client.post("/v1/accounts/password-reset", {"email": f"nobody-{uuid.uuid4().hex}@example.com"})
        known_ms, unknown_ms, statuses = interleaved(account, stranger, SAMPLES)
        assert statuses == {202}, statuses
        rows.append(("password reset: account / unknown address", known_ms, unknown_ms))

        def body(members):
            return {"pending_credential": "A" * 43, "enrollment_id": str(uuid.uuid4()), "padding": {f"k{i}": i for i in range(members)}}

        for members, label in ((58, "the largest keyed body"), (5000, "5,000 members")):
            raw = json.dumps(body(members)).encode()
            keyed = lambda: client.post("/v1/mfa/sign-in/challenges", raw, {"Idempotency-Key": uuid.uuid4().hex})
            plain = lambda: client.post("/v1/mfa/sign-in/challenges", raw)
            keyed_ms, plain_ms, statuses = interleaved(keyed, plain, max(50, SAMPLES // 4))
            assert statuses <= {401, 413}, statuses
            rows.append((f"challenge, {label} ({len(raw)} B): key / none", keyed_ms, plain_ms))
        # What the body adds to a keyed request (the claim of the key is the same work for both).
        small, large = json.dumps(body(0)).encode(), json.dumps(body(58)).encode()
        large_ms, small_ms, statuses = interleaved(lambda: client.post("/v1/mfa/sign-in/challenges", large, {"Idempotency-Key": uuid.uuid4().hex}),
                                                   lambda: client.post("/v1/mfa/sign-in/challenges", small, {"Idempotency-Key": uuid.uuid4().hex}),
                                                   max(50, SAMPLES // 4))
        assert statuses == {401}, statuses
        rows.append((f"challenge with a key: {len(large)} B body / {len(small)} B body", large_ms, small_ms))
    finally:
        process.terminate()
        process.wait()
    print(f"{'probe':<58} {'median ms':>10} {'baseline ms':>12} {'ratio':>7}")
    for name, value, baseline in rows:
        print(f"{name:<58} {value:>10.3f} {baseline:>12.3f} {value / baseline:>7.2f}")


if __name__ == "__main__":
    main()
