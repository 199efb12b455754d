#!/usr/bin/env python3
"""Load for privacyIDEA's POST /validate/check (PIN + TOTP), standard library only.

Usage: check_load.py BASE_URL SECRET_BASE32 OUT_FILE --threads N --seconds S
                     [--users 1000] [--user-prefix bench] [--pin 1234] [--state FILE]

N threads, each on its own keep-alive connection, send form-encoded
`user=benchK&pass=1234<TOTP>` for S seconds. privacyIDEA accepts a TOTP code
once per 30-s step per token (a replay answers result.value false), so the
users that bench/privacyidea/peer.sh enrolled (bench0..bench<users-1>, one
token each, same secret and PIN) are taken round robin and a user is never
sent twice in one step: when every user has been used in the current step the
threads wait for the next one (counted as pool_waits; raise PI_BENCH_USERS in
peer.sh if it is not 0). The round-robin position and each user's last step
are kept in a small state file so that back-to-back runs do not replay codes.

A check counts as ok when privacyIDEA answered HTTP 200 with result.status
true and result.value true, i.e. it verified the PIN hash and the OTP.
checks_per_second is ok / elapsed. Written to OUT_FILE and printed:
checks_per_second, p50_ms, p99_ms (all answered requests), ok, total,
failures (total - ok), plus requests_per_second, errors (no HTTP answer),
rejected (answered, not ok), pool_waits, threads, seconds, users.
"""
import argparse
import base64
import hashlib
import hmac
import http.client
import json
import os
import struct
import sys
import tempfile
import threading
import time
import urllib.parse

STEP = 30


def totp(key: bytes, counter: int, digits: int = 6) -> str:
    mac = hmac.new(key, struct.pack(">Q", counter), hashlib.sha1).digest()
    off = mac[-1] & 0x0F
    code = (struct.unpack(">I", mac[off:off + 4])[0] & 0x7FFFFFFF) % (10 ** digits)
    return str(code).zfill(digits)


class Pool:
    """Round robin over the users, each user at most once per TOTP step."""

    def __init__(self, users: int, state_file: str):
        self.users = users
        self.state_file = state_file
        self.lock = threading.Lock()
        self.next = 0
        self.last_step = [-1] * users
        self.waits = 0
        try:
            with open(state_file) as f:
                state = json.load(f)
            if state.get("users") == users:
                self.next = int(state["next"]) % users
                self.last_step = [int(x) for x in state["last_step"]]
        except (OSError, ValueError, KeyError, TypeError):
            pass

    def take(self, deadline: float):
        """Return (index, step) or None once the deadline has passed."""
        while True:
            with self.lock:
                now = time.time()
                if now >= deadline:
                    return None
                step = int(now // STEP)
                i = self.next
                if self.last_step[i] < step:
                    self.last_step[i] = step
                    self.next = (i + 1) % self.users
                    return i, step
                self.waits += 1
                wake = (step + 1) * STEP
            time.sleep(max(0.0, min(wake, deadline) - time.time()) + 0.001)

    def save(self):
        try:
            tmp = self.state_file + ".tmp"
            with open(tmp, "w") as f:
                json.dump({"users": self.users, "next": self.next, "last_step": self.last_step}, f)
            os.replace(tmp, self.state_file)
        except OSError as e:
            print(f"check_load: could not save {self.state_file}: {e}", file=sys.stderr)


def worker(args, key, pool, deadline, results, host, port, path_prefix):
    conn = None
    lat, ok, rejected, errors, sample = [], 0, 0, 0, None
    path = path_prefix + "/validate/check"
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Connection": "keep-alive"}
    while True:
        got = pool.take(deadline)
        if got is None:
            break
        i, step = got
        body = urllib.parse.urlencode({"user": f"{args.user_prefix}{i}", "pass": args.pin + totp(key, step)})
        t0 = time.perf_counter()
        answer = None
        for attempt in (1, 2):
            try:
                if conn is None:
                    conn = http.client.HTTPConnection(host, port, timeout=60)
                conn.request("POST", path, body=body, headers=headers)
                resp = conn.getresponse()
                answer = (resp.status, resp.read())
                if resp.will_close:
                    conn.close()
                    conn = None
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                # A keep-alive connection the server had closed: reconnect once.
                if conn is not None:
                    conn.close()
                conn = None
                if attempt == 2:
                    answer = ("error", repr(e))
            except (OSError, http.client.HTTPException) as e:
                if conn is not None:
                    conn.close()
                conn = None
                answer = ("error", repr(e))
                break
        dt = time.perf_counter() - t0
        if answer[0] == "error":
            errors += 1
            sample = sample or answer[1]
            continue
        lat.append(dt)
        status, data = answer
        try:
            result = json.loads(data)["result"]
            good = status == 200 and result.get("status") is True and result.get("value") is True
        except (ValueError, KeyError, TypeError):
            good = False
        if good:
            ok += 1
        else:
            rejected += 1
            sample = sample or f"HTTP {status}: {data[:300]!r}"
    if conn is not None:
        conn.close()
    results.append((lat, ok, rejected, errors, sample))


def percentile(sorted_values, q):
    if not sorted_values:
        return 0.0
    k = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[k] * 1000.0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base_url")
    ap.add_argument("secret")
    ap.add_argument("out_file")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--users", type=int, default=int(os.environ.get("PI_BENCH_USERS", "1000")))
    ap.add_argument("--user-prefix", default="bench")
    ap.add_argument("--pin", default="1234")
    ap.add_argument("--state", default=None,
                    help="round-robin state file (default: one per host:port in the temp dir)")
    args = ap.parse_args()
    if args.threads < 1 or args.seconds <= 0 or args.users < 1:
        ap.error("--threads, --seconds and --users must be positive")

    url = urllib.parse.urlsplit(args.base_url)
    if url.scheme != "http" or not url.hostname:
        ap.error("BASE_URL must look like http://127.0.0.1:PORT")
    host, port = url.hostname, url.port or 80
    secret = args.secret.strip().replace(" ", "").upper()
    key = base64.b32decode(secret + "=" * (-len(secret) % 8))
    state = args.state or os.path.join(tempfile.gettempdir(), f"pi-check-load-{host}_{port}.json")
    pool = Pool(args.users, state)

    results = []
    start = time.time()
    deadline = start + args.seconds
    t0 = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(args, key, pool, deadline, results, host, port,
                                                     url.path.rstrip("/")))
               for _ in range(args.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    pool.save()

    lat = sorted(x for r in results for x in r[0])
    ok = sum(r[1] for r in results)
    rejected = sum(r[2] for r in results)
    errors = sum(r[3] for r in results)
    total = ok + rejected + errors
    lines = [
        f"checks_per_second={ok / elapsed:.2f}",
        f"p50_ms={percentile(lat, 0.50):.2f}",
        f"p99_ms={percentile(lat, 0.99):.2f}",
        f"ok={ok}",
        f"total={total}",
        f"failures={total - ok}",
        f"requests_per_second={total / elapsed:.2f}",
        f"errors={errors}",
        f"rejected={rejected}",
        f"pool_waits={pool.waits}",
        f"threads={args.threads}",
        f"seconds={elapsed:.2f}",
        f"users={args.users}",
    ]
    with open(args.out_file, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    samples = [r[4] for r in results if r[4]]
    if samples:
        print(f"check_load: first failure: {samples[0]}", file=sys.stderr)
    if pool.waits:
        print(f"check_load: all {args.users} users were used within one 30-s step {pool.waits} times "
              "(threads waited): enroll more users", file=sys.stderr)
    return 0 if total else 1


if __name__ == "__main__":
    sys.exit(main())
