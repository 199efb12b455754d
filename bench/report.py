#!/usr/bin/env python3
"""Reads the wrk outputs and the Argon2 baseline that bench/run.sh left in DIR
and prints the table and the PASS/MISS summary. Standard library only.

Usage: report.py DIR
Exits 1 when an expected output is missing or unparsable (the run failed)."""
import os
import re
import statistics
import sys

UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def wrk(path):
    """Requests/sec, p99 (ms), request count, duration (s), non-2xx/3xx, socket errors."""
    text = open(path).read()
    rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
    p99 = re.search(r"^\s*99%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M)
    done = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m),", text)
    if not (rps and p99 and done):
        raise ValueError(f"{path}: not a complete wrk --latency output:\n{text}")
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    return {
        "rps": float(rps.group(1)),
        "p99": float(p99.group(1)) * UNITS[p99.group(2)],
        "requests": int(done.group(1)),
        "seconds": float(done.group(2)) * UNITS[done.group(3)] / 1000.0,
        "non2xx": int(non2xx.group(1)) if non2xx else 0,
        "sockerr": sum(int(g) for g in sock.groups()) if sock else 0,
    }


def main(d):
    get = lambda name: wrk(os.path.join(d, name + ".txt"))
    nginx, health, session = get("nginx"), get("health"), get("session")
    quiet, storm, under = get("session_quiet"), get("storm"), get("session_storm")
    nolog, alone = get("nginx_nolog"), get("storm_alone")
    m = re.search(r"verifications_per_second ([\d.]+)", open(os.path.join(d, "baseline.txt")).read())
    if not m:
        raise ValueError("argon2 baseline printed no figure")
    baseline = float(m.group(1))
    logins = (alone["requests"] - alone["non2xx"]) / alone["seconds"]
    logins_loaded = (storm["requests"] - storm["non2xx"]) / storm["seconds"]
    settings = open(os.path.join(d, "settings.txt")).read().strip()
    mfa = dict(line.split(" ", 1) for line in open(os.path.join(d, "mfa.txt")).read().splitlines())
    mfa_rate = float(mfa["mfa_signins_per_second"])
    pairs = []
    i = 1
    while os.path.exists(os.path.join(d, f"pair_nginx_{i}.txt")):
        pairs.append(get(f"pair_session_{i}")["rps"] / get(f"pair_nginx_{i}")["rps"])
        i += 1
    paired = statistics.median(pairs) if pairs else session["rps"] / nginx["rps"]

    print()
    print(f"Settings: {settings}")
    print()
    row = "{:<44} {:>10} {:>10} {:>9} {:>8}"
    print(row.format("Measurement", "req/s", "p99 ms", "x nginx", "non-2xx"))
    print(row.format(*["-" * n for n in (44, 10, 10, 9, 8)]))

    def line(label, r, ratio=True):
        print(row.format(label, f"{r['rps']:.0f}", f"{r['p99']:.2f}",
                         f"{r['rps'] / nginx['rps']:.2f}" if ratio else "", r["non2xx"] + r["sockerr"]))

    line("1. nginx static 200, access log on", nginx)
    line("   nginx static 200, access log off", nolog)
    line("2. trifactord GET /health", health)
    line("3. trifactord GET /v1/session", session)
    line("   GET /v1/session, low load (-c4, no storm)", quiet)
    line("4. login storm alone POST /v1/sessions", alone, ratio=False)
    print(row.format("   logins/s succeeded (2xx), storm alone", f"{logins:.1f}", "", "", ""))
    line("   login storm with GETs beside it", storm, ratio=False)
    print(row.format("   logins/s succeeded (2xx), with GETs", f"{logins_loaded:.1f}", "", "", ""))
    line("   GET /v1/session during the storm (-c4)", under)
    print(row.format("5. multi-factor sign-ins/s (password + TOTP)", f"{mfa_rate:.1f}", mfa["mfa_signin_p99_ms"], "", mfa["mfa_failures"]))
    print(row.format("6. Argon2id verify baseline (C, libsodium)", f"{baseline:.1f}", "", "", ""))
    print()
    if storm["non2xx"] + alone["non2xx"]:
        print(f"Note: {storm['non2xx'] + alone['non2xx']} of {storm['requests'] + alone['requests']} storm requests were not 2xx "
              "(503 = hashing queue full, 429 = rate limit, 5xx = failure).")
    if any(r["sockerr"] for r in (nginx, nolog, health, session, quiet, storm, alone, under)):
        print("Note: the non-2xx column includes wrk socket errors (connect/read/write/timeout).")

    checks = [
        ("GET /v1/session vs nginx (median of pairs)", paired, ">= 0.50", lambda v: v >= 0.50, "{:.2f}x"),
        ("GET /v1/session p99 during login storm", under["p99"], "< 50 ms", lambda v: v < 50, "{:.2f} ms"),
        ("logins/s vs Argon2id baseline", logins / baseline, ">= 0.80", lambda v: v >= 0.80, "{:.2f}x"),
        ("multi-factor sign-ins/s vs Argon2id baseline", mfa_rate / baseline, ">= 0.85", lambda v: v >= 0.85, "{:.2f}x"),
        ("storm requests not 2xx", storm["non2xx"] + alone["non2xx"], "few (info)",
         lambda v: v <= (storm["requests"] + alone["requests"]) * 0.01, "{:d}"),
    ]
    if pairs:
        print(f"Interleaved pairs (nginx then GET /v1/session, 4 s each): ratios {', '.join(f'{r:.2f}' for r in pairs)}; median {paired:.2f}")
        print()
    print("Summary")
    for name, value, target, ok, fmt in checks:
        print(f"  {name:<42} {fmt.format(value):>10}  target {target:<18} {'PASS' if ok(value) else 'MISS'}")
    print(f"  (health {health['rps'] / nginx['rps']:.2f}x nginx; GET /v1/session {session['rps'] / nolog['rps']:.2f}x nginx without its log; "
          f"logins {logins:.1f}/s alone vs baseline {baseline:.1f}/s)")


if __name__ == "__main__":
    try:
        main(sys.argv[1])
    except (OSError, ValueError) as e:
        print(f"report: {e}", file=sys.stderr)
        sys.exit(1)
