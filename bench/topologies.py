#!/usr/bin/env python3
"""Prints the table of bench/topologies.sh from the outputs in DIR: each work on each topology,
the ratios (against nginx, one instance to two, Trifactor to privacyIDEA), the memory of idle
connections, and PASS/MISS against the targets. Standard library only.

Usage: topologies.py DIR"""
import os
import re
import sys

from report import wrk

TOPOLOGIES = [("sqlite", "SQLite"), ("pg1", "PostgreSQL ×1"), ("pg2", "PostgreSQL ×2 + nginx")]


def figures(path):
    """`name value` or `name=value` lines as a dict of floats (text kept when not a number)."""
    out = {}
    if not os.path.exists(path):
        return out
    for line in open(path):
        m = re.match(r"\s*([\w.]+)[ =]\s*(\S+)", line)
        if m:
            try:
                out[m.group(1)] = float(m.group(2))
            except ValueError:
                out[m.group(1)] = m.group(2)
    return out


def main(d):
    f = lambda name: os.path.join(d, name)
    nginx = wrk(f("nginx.txt"))
    proxied = wrk(f("nginx-proxied.txt")) if os.path.exists(f("nginx-proxied.txt")) else None
    rows = {}
    for t, _ in TOPOLOGIES:
        if not os.path.exists(f(f"{t}-session.txt")):
            continue
        session, storm = wrk(f(f"{t}-session.txt")), wrk(f(f"{t}-session_storm.txt"))
        rows[t] = {
            "session": session["rps"], "session_p99": session["p99"], "session_vs_nginx": session["rps"] / nginx["rps"],
            "mfa": figures(f(f"{t}-mfa.txt")).get("mfa_signins_per_second", 0.0),
            "verify": figures(f(f"{t}-verify.txt")).get("verifications_per_second", 0.0),
            "push": figures(f(f"{t}-push.txt")).get("push_signins_per_second", 0.0),
            "storm_p99": storm["p99"],
            "failures": sum(figures(f(f"{t}-{w}.txt")).get(k, 0) for w, k in
                            (("mfa", "mfa_failures"), ("verify", "verifications_failures"), ("push", "push_signins_failures")))
                        + session["non2xx"] + session["sockerr"] + storm["non2xx"] + storm["sockerr"],
        }
    baseline = float(re.search(r"verifications_per_second ([\d.]+)", open(f("baseline.txt")).read()).group(1))
    pi = {mode: figures(f(f"pi-{mode}.txt")) for mode in ("argon2", "default")}
    idle, after = figures(f("idle.txt")), figures(f("idle_after.txt"))

    print()
    header = "{:<46}" + " {:>22}" * len(rows)
    print(f"nginx static 200 with its access log: {nginx['rps']:.0f} req/s, p99 {nginx['p99']:.2f} ms (the baseline of the × nginx ratios)")
    if proxied:
        print(f"nginx static 200 through nginx as a proxy (the balancer's settings): {proxied['rps']:.0f} req/s, p99 {proxied['p99']:.2f} ms "
              f"(×{proxied['rps'] / nginx['rps']:.2f} nginx: the ceiling of anything behind that proxy here)")
    print(header.format("Work",
                        *[name for t, name in TOPOLOGIES if t in rows]))
    print(header.format("-" * 46, *["-" * 22] * len(rows)))

    def line(label, key, fmt):
        print(header.format(label, *[fmt.format(rows[t][key]) for t, _ in TOPOLOGIES if t in rows]))

    line("GET /v1/session req/s", "session", "{:.0f}")
    line("  × nginx", "session_vs_nginx", "{:.2f}")
    line("  p99 ms", "session_p99", "{:.2f}")
    line("multi-factor sign-ins/s (password + TOTP)", "mfa", "{:.1f}")
    line("/v2/verify start + check /s", "verify", "{:.1f}")
    line("push sign-ins/s (device approves)", "push", "{:.1f}")
    line("GET /v1/session p99 ms during a login storm", "storm_p99", "{:.2f}")
    line("failures (non-2xx, errors)", "failures", "{:.0f}")
    print()
    if "pg1" in rows and "pg2" in rows:
        for key, label in (("session", "GET /v1/session"), ("mfa", "multi-factor sign-ins"), ("verify", "verifications"), ("push", "push sign-ins")):
            print(f"One instance to two on PostgreSQL, {label}: ×{rows['pg2'][key] / rows['pg1'][key]:.2f}")
        print()
    print(f"Argon2id verify baseline (C, libsodium, all cores): {baseline:.1f}/s")
    for mode, label in (("argon2", "PIN hash at Trifactor's Argon2id cost"), ("default", "privacyIDEA's default PIN hash")):
        if pi[mode]:
            print(f"privacyIDEA 3.14, {label}: {pi[mode].get('checks_per_second', 0):.1f} checks/s (p99 {pi[mode].get('p99_ms', 0):.1f} ms, "
                  f"{pi[mode].get('ok', 0):.0f} verified of {pi[mode].get('total', 0):.0f})")
    for label, i in (("on a new instance", idle), ("after the loads", after)):
        if i:
            print(f"10,000 idle keep-alive connections {label}: {i.get('idle_still_open', 0):.0f} open, RSS {i.get('idle_rss_mb', 0):.1f} MB, "
                  f"GET /health p50 {i.get('idle_health_p50_ms', 0):.2f} ms, max {i.get('idle_health_max_ms', 0):.2f} ms")
    print()

    checks = []
    best_mfa = max(r["mfa"] for r in rows.values()) if rows else 0
    if pi["argon2"].get("checks_per_second"):
        checks.append(("best multi-factor sign-ins vs privacyIDEA checks, equal hash cost", best_mfa / pi["argon2"]["checks_per_second"],
                       ">= 10", lambda v: v >= 10, "{:.2f}x"))
    if pi["default"].get("checks_per_second"):
        checks.append(("best multi-factor sign-ins vs privacyIDEA checks, its defaults", best_mfa / pi["default"]["checks_per_second"],
                       "(reported)", lambda v: True, "{:.2f}x"))
    for t, name in TOPOLOGIES:
        if t in rows:
            checks.append((f"GET /v1/session vs nginx, {name}", rows[t]["session_vs_nginx"], ">= 0.50", lambda v: v >= 0.5, "{:.2f}x"))
            checks.append((f"GET /v1/session p99 in a login storm, {name}", rows[t]["storm_p99"], "< 50 ms", lambda v: v < 50, "{:.2f} ms"))
    if proxied and "pg2" in rows:
        checks.append(("GET /v1/session behind nginx vs the same proxy's ceiling (nginx behind nginx)", rows["pg2"]["session"] / proxied["rps"],
                       "(reported)", lambda v: True, "{:.2f}x"))
    if idle:
        checks.append(("RSS with 10,000 idle keep-alive connections, new instance", idle["idle_rss_mb"], "< 128 MB", lambda v: v < 128, "{:.1f} MB"))
        checks.append(("GET /health beside them (max of 20)", idle["idle_health_max_ms"], "< 50 ms", lambda v: v < 50, "{:.2f} ms"))
    for label, value, target, ok, fmt in checks:
        print(f"{'PASS' if ok(value) else 'MISS'}  {label}: {fmt.format(value)} (target {target})")


if __name__ == "__main__":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    main(sys.argv[1])
