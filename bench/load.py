#!/usr/bin/env python3
"""Loads for bench/topologies.sh, each writing `name value` lines to OUT_FILE.

  load.py verify BASE OUT --key K --secret S --numbers N --threads T --seconds S
      /v2/verify start then check (test numbers with the fixed code 1234): completed verifications/s.
  load.py push BASE OUT --users U --threads T --seconds S
      passwordless push sign-ins completed end to end (start, the device's poll and signed approval,
      complete): sign-ins/s. U users, each with a device key, are set up first (3 pushes per 10 minutes each).
  load.py idle BASE OUT --pid P --connections N
      N keep-alive connections that each made one request and stay open idle; then the server's RSS
      and the latency of GET /health on a fresh connection.

Needs `cryptography` (device keys) for push; the rest is the standard library.
"""
import argparse
import base64
import http.client
import json
import re
import resource
import socket
import threading
import time
import urllib.parse


class Client:
    def __init__(self, base):
        url = urllib.parse.urlparse(base)
        self.conn = http.client.HTTPConnection(url.hostname, url.port, timeout=30)

    def call(self, method, path, body=None, token=None, headers=None, basic=None):
        h = {"Content-Type": "application/json"}
        if token:
            h["Authorization"] = "Bearer " + token
        if basic:
            h["Authorization"] = "Basic " + base64.b64encode(f"{basic[0]}:{basic[1]}".encode()).decode()
        h.update(headers or {})
        self.conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
        r = self.conn.getresponse()
        data = r.read()
        return r.status, (json.loads(data) if data else {})


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000 if values else float("nan")


def run_threads(threads, seconds, one):
    """Calls one(worker, state) in `threads` threads for `seconds`; returns (latencies, failures, elapsed)."""
    latencies, failures, lock = [], [], threading.Lock()
    deadline = time.time() + seconds

    def worker(index):
        state = {}
        while time.time() < deadline:
            t0 = time.time()
            try:
                ok = one(index, state)
            except Exception as e:  # noqa: BLE001 (counted and reported)
                ok = f"{type(e).__name__}: {e}"
                state.clear()
            with lock:
                if ok is True:
                    latencies.append(time.time() - t0)
                elif ok is None:
                    return
                else:
                    failures.append(ok)

    t0 = time.time()
    workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return latencies, failures, time.time() - t0


def write(out, name, latencies, failures, elapsed, extra=()):
    with open(out, "w") as f:
        f.write(f"{name}_per_second {len(latencies) / elapsed:.2f}\n{name}_p50_ms {percentile(latencies, 0.5):.2f}\n")
        f.write(f"{name}_p99_ms {percentile(latencies, 0.99):.2f}\n{name}_failures {len(failures)}\n")
        for line in extra:
            f.write(line + "\n")
        if failures:
            f.write(f"{name}_failure_examples {failures[:3]}\n")


def verify(a):
    numbers = [f"4474001{n:05d}" for n in range(a.numbers)]

    def one(index, state):
        c = state.setdefault("c", Client(a.base))
        i = state.get("i", index)
        state["i"] = i + a.threads
        number = numbers[i % len(numbers)]  # each thread its own numbers: one running request per number
        status, started = c.call("POST", "/v2/verify", {"brand": "Bench", "workflow": [{"channel": "sms", "to": number}]}, basic=(a.key, a.secret))
        if status != 202:
            return f"start {status} {started}"
        status, checked = c.call("POST", f"/v2/verify/{started['request_id']}", {"code": "1234"}, basic=(a.key, a.secret))
        return True if status == 200 else f"check {status} {checked}"

    write(a.out, "verifications", *run_threads(a.threads, a.seconds, one))


class Device:
    def __init__(self):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.spki = base64.b64encode(self.key.public_key().public_bytes(serialization.Encoding.DER,
                                                                         serialization.PublicFormat.SubjectPublicKeyInfo)).decode()
        self.id = None

    def sign(self, purpose, challenge, action="-"):
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        message = f"trifactor-device-signature-v1\npurpose: {purpose}\nchallenge: {challenge}\naction: {action}".encode()
        return base64.b64encode(self.key.sign(message, ec.ECDSA(hashes.SHA256()))).decode()

    def headers(self):
        now = str(int(time.time()))
        return {"X-Trifactor-Device-Time": now, "X-Trifactor-Device-Signature": self.sign("poll", f"{self.id}:{now}")}


def push(a):
    run = int(time.time())
    users, errors, lock = [], [], threading.Lock()

    def set_up(index):
        try:
            c = Client(a.base)
            email, password = f"push{index}-{run}@example.com", f"bench-Pa55phrase-{run}-{index}"
            assert c.call("POST", "/v1/accounts", {"email": email, "password": password})[0] == 202
            listing = c.call("GET", "/dev/outbox?to=" + urllib.parse.quote(email))[1]
            code = re.search(r"(?<!\d)\d{6}(?!\d)", next(m["text"] for m in listing["messages"] if m["channel"] == "email")).group()
            assert c.call("POST", "/v1/accounts/verify-email", {"email": email, "code": code})[0] == 200
            status, signed = c.call("POST", "/v1/sessions", {"email": email, "password": password})
            assert status == 201, status
            device = Device()
            status, begin = c.call("POST", "/v1/mfa/enrollments", {"kind": "device", "public_key": device.spki, "device_name": "bench"}, signed["token"])
            assert status == 202, (status, begin)
            status, done = c.call("POST", f"/v1/mfa/enrollments/{begin['enrollment_session']}",
                                  {"signature": device.sign("enroll", begin["challenge"])}, signed["token"])
            assert status == 201, (status, done)
            device.id = done["enrollment_id"]
            with lock:
                for _ in range(3):  # 3 pushes per address per 10 minutes
                    users.append((email, device))
        except Exception as e:  # noqa: BLE001
            with lock:
                errors.append(f"user {index}: {e!r}")

    t0 = time.time()
    pending = list(range(a.users))
    setup_threads = [threading.Thread(target=lambda: [set_up(i) for i in iter(lambda: pending.pop() if pending else None, None)])
                     for _ in range(8)]
    for t in setup_threads:
        t.start()
    for t in setup_threads:
        t.join()
    setup_seconds = time.time() - t0

    def one(index, state):
        with lock:
            if not users:
                return None
            email, device = users.pop()
        c = state.setdefault("c", Client(a.base))
        status, started = c.call("POST", "/v1/sessions/push", {"email": email})
        if status != 202:
            return f"start {status} {started}"
        status, listing = c.call("GET", f"/v1/devices/{device.id}/approvals?wait=0", headers=device.headers())
        approval = next((p for p in listing.get("approvals", []) if p["approval_id"] == started["approval_id"]), None)
        if status != 200 or approval is None:
            return f"poll {status}"
        number = started["number"]
        status, decided = c.call("POST", f"/v1/devices/{device.id}/approvals/{approval['approval_id']}", headers=device.headers(),
                                 body={"decision": "approve", "number": number, "signature": device.sign("push", approval["approval_id"], f"approve:{number}")})
        if status != 200:
            return f"decide {status} {decided}"
        status, done = c.call("POST", "/v1/sessions/push/complete", {"pending_credential": started["pending_credential"],
                                                                     "approval_id": started["approval_id"]})
        return True if status == 201 else f"complete {status} {done}"

    latencies, failures, elapsed = run_threads(a.threads, a.seconds, one)
    write(a.out, "push_signins", latencies, failures + errors, elapsed,
          [f"push_users {len(users) // 3 if users else 0}", f"push_setup_seconds {setup_seconds:.1f}"])


def idle(a):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    url = urllib.parse.urlparse(a.base)
    request = f"GET /health HTTP/1.1\r\nHost: {url.hostname}\r\n\r\n".encode()
    sockets, failed = [], 0
    for _ in range(a.connections):
        try:
            s = socket.create_connection((url.hostname, url.port), timeout=10)
            s.sendall(request)
            if not s.recv(4096).startswith(b"HTTP/1.1 200"):
                failed += 1
            sockets.append(s)
        except OSError:
            failed += 1
    time.sleep(2)
    rss = int(re.search(r"VmRSS:\s+(\d+) kB", open(f"/proc/{a.pid}/status").read()).group(1)) / 1024
    latencies = []
    for _ in range(20):
        t0 = time.time()
        status, _ = Client(a.base).call("GET", "/health")
        latencies.append(time.time() - t0)
        assert status == 200
    still = sum(1 for s in sockets if not _closed(s))
    with open(a.out, "w") as f:
        f.write(f"idle_connections {len(sockets)}\nidle_failed {failed}\nidle_still_open {still}\nidle_rss_mb {rss:.1f}\n")
        f.write(f"idle_health_p50_ms {percentile(latencies, 0.5):.2f}\nidle_health_max_ms {max(latencies) * 1000:.2f}\n")
    for s in sockets:
        s.close()


def _closed(s):
    s.setblocking(False)
    try:
        return s.recv(1, socket.MSG_PEEK) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=["verify", "push", "idle"])
    p.add_argument("base")
    p.add_argument("out")
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--key")
    p.add_argument("--secret")
    p.add_argument("--numbers", type=int, default=1000)
    p.add_argument("--users", type=int, default=300)
    p.add_argument("--pid", type=int)
    p.add_argument("--connections", type=int, default=10000)
    a = p.parse_args()
    {"verify": verify, "push": push, "idle": idle}[a.kind](a)


if __name__ == "__main__":
    main()
