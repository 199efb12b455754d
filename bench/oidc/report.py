#!/usr/bin/env python3
"""Prints the table of bench/oidc.sh from the outputs in DIR (Markdown, ready
for bench/README.md), the CPU split of each load, and PASS/MISS against the
targets. Exits 1 when a grant or a sign-in failed (any answer but the
expected one is a bug), 0 otherwise, a MISS included. Standard library only.

Usage: report.py DIR"""
import os
import re
import sys

UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}


def figures(path):
    """`name value` lines as a dict (floats where they are numbers)."""
    out = {}
    if os.path.exists(path):
        for line in open(path):
            m = re.match(r"\s*([\w.]+)\s+(.*\S)", line)
            if m:
                try:
                    out[m.group(1)] = float(m.group(2))
                except ValueError:
                    out[m.group(1)] = m.group(2)
    return out


def wrk(path):
    """Requests/s, p50 and p99 (ms), errors (non-2xx, socket errors, the script's own count), CPU split."""
    if not os.path.exists(path):
        return None
    text = open(path).read()
    rps = re.search(r"Requests/sec:\s+([\d.]+)", text)
    lat = {q: re.search(rf"^\s*{q}%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M) for q in (50, 99)}
    if not (rps and all(lat.values())):
        raise ValueError(f"{path}: not a complete wrk --latency output:\n{text}")
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    script = figures(path)
    cpu = figures(path[:-4] + ".cpu")
    return {
        "rps": float(rps.group(1)),
        "requests": int(re.search(r"(\d+) requests in", text).group(1)),
        "p50": float(lat[50].group(1)) * UNITS[lat[50].group(2)],
        "p99": float(lat[99].group(1)) * UNITS[lat[99].group(2)],
        "errors": max(int(non2xx.group(1)) if non2xx else 0, int(script.get("errors", 0))),
        "sockerr": sum(int(g) for g in sock.groups()) if sock else 0,
        "last_error": script.get("last_error"),
        "cpu": cpu,
    }


def statements(path):
    """From `uniq -c` lines of the statements of 100 grants: [(per grant, text)] of those run at least once a grant."""
    out = []
    if os.path.exists(path):
        for line in open(path):
            count, _, text = line.strip().partition(" ")
            if int(count) >= 100:
                out.append((int(count) // 100, text))
    return out


def per_cpu(r):
    """Grants per CPU-second of the server (and its database): what a core gives when nothing else wants it."""
    spent = r["cpu"].get("server", 0) + r["cpu"].get("db", 0)
    return r["requests"] / spent if spent else float("nan")


def signin_per_cpu(r):
    """Hosted sign-ins per CPU-second of the server and its database (nan when not measured)."""
    spent = r.get("hosted_server_cpu", 0) + r.get("hosted_db_cpu", 0)
    return r.get("hosted_signins", 0) / spent if spent else float("nan")


def main(d):
    f = lambda name: os.path.join(d, name)
    s = figures(f("settings.txt"))
    cores = int(s.get("cores", os.cpu_count()))
    nginx = wrk(f("nginx.txt"))
    ssl = re.search(r"ecdsa \(nistp256\)\s+[\d.]+s\s+[\d.]+s\s+([\d.]+)\s+([\d.]+)", open(f("openssl.txt")).read())
    sign = float(ssl.group(1)) if ssl else float("nan")
    argon = figures(f("baseline.txt")).get("verifications_per_second", float("nan"))
    runs = {(t, g): wrk(f(f"{t}-{g}.txt")) for t in ("sqlite", "pg", "dot") for g in ("refresh", "cc")}
    signin = {t: figures(f(f"{t}-signin.txt")) for t in ("sqlite", "pg")}
    rss = {t: figures(f(f"{t}-rss.txt")).get("rss_kib", float("nan")) / 1024 for t in ("sqlite", "pg")}
    logs = {t: figures(f(f"{t}-log.txt")) for t in ("sqlite", "pg")}
    stmts = {kind: statements(f(f"pg-{kind}-statements.txt")) for kind in ("refresh_token", "client_credentials")}
    cols = [("sqlite", "Trifactor, SQLite"), ("pg", "Trifactor, PostgreSQL"), ("dot", "django-oauth-toolkit")]
    cols = [(t, name) for t, name in cols if runs[(t, "refresh")]]
    n = int(s.get("families", 16))

    def cell(v, fmt):
        return "" if v is None or v != v else fmt.format(v)

    def row(label, values):
        print(f"| {label} | " + " | ".join(values) + " |")

    print()
    print(f"{s.get('date', '')}. {s.get('machine', '')}. {s.get('versions', '')}. "
          f"wrk -t{n} -c{n} (one connection per thread; one refresh-token family per thread), 2 s warm-up, then {s.get('duration', 10):.0f} s.")
    print()
    print("| work | " + " | ".join(name for _, name in cols) + " |")
    print("| --- |" + " ---: |" * len(cols))
    for g, label in (("refresh", "refresh-token grants/s"), ("cc", "client_credentials grants/s")):
        row(label, [cell(runs[(t, g)] and runs[(t, g)]["rps"], "{:,.0f}") for t, _ in cols])
        row("  per core", [cell(runs[(t, g)] and runs[(t, g)]["rps"] / cores, "{:,.0f}") for t, _ in cols])
        row("  per CPU-second of the server and its database",
            [cell(runs[(t, g)] and per_cpu(runs[(t, g)]), "{:,.0f}") for t, _ in cols])
        if runs[("dot", g)]:
            row("    × django-oauth-toolkit, per CPU-second", [cell(runs[(t, g)] and per_cpu(runs[(t, g)]) / per_cpu(runs[("dot", g)]), "{:.1f}") for t, _ in cols])
        if runs[("dot", g)]:
            row("  × django-oauth-toolkit", [cell(runs[(t, g)] and runs[(t, g)]["rps"] / runs[("dot", g)]["rps"], "{:.1f}") for t, _ in cols])
        row("  × nginx static 200", [cell(runs[(t, g)] and runs[(t, g)]["rps"] / nginx["rps"], "{:.3f}") for t, _ in cols])
        row("  p50 / p99 ms", [f"{runs[(t, g)]['p50']:.2f} / {runs[(t, g)]['p99']:.2f}" if runs[(t, g)] else "" for t, _ in cols])
        row("  errors", [f"{runs[(t, g)]['errors'] + runs[(t, g)]['sockerr']}" if runs[(t, g)] else "" for t, _ in cols])
    row("hosted sign-ins/s (email, password, TOTP, code exchange)",
        [cell(signin.get(t, {}).get("hosted_signins_per_second"), "{:.1f}") for t, _ in cols])
    row("  × Argon2id verify baseline", [cell(signin.get(t, {}).get("hosted_signins_per_second", float("nan")) / argon, "{:.2f}") for t, _ in cols])
    # The Argon2id baseline keeps every core busy: its rate per CPU-second is the rate over the cores.
    row("  per CPU-second of the server and its database", [cell(signin.get(t) and signin_per_cpu(signin[t]), "{:.1f}") for t, _ in cols])
    row("    × Argon2id verifications per CPU-second", [cell(signin.get(t) and signin_per_cpu(signin[t]) / (argon / cores), "{:.2f}") for t, _ in cols])
    row("  CPU-seconds per second: load generator / server / database", [
        f"{signin[t]['hosted_client_cpu'] / signin[t]['hosted_elapsed']:.2f} / {signin[t]['hosted_server_cpu'] / signin[t]['hosted_elapsed']:.2f} / {signin[t]['hosted_db_cpu'] / signin[t]['hosted_elapsed']:.2f}"
        if signin.get(t, {}).get("hosted_elapsed") else "" for t, _ in cols])
    row("  p50 / p99 ms", [f"{signin[t].get('hosted_signin_p50_ms', 0):.0f} / {signin[t].get('hosted_signin_p99_ms', 0):.0f}" if signin.get(t) else "" for t, _ in cols])
    row("  failures", [f"{signin[t].get('hosted_failures', 0):.0f}" if signin.get(t) else "" for t, _ in cols])
    row("idle RSS MB (after discovery + JWKS)", [cell(rss.get(t), "{:.1f}") for t, _ in cols])
    print()
    print("| ceiling | per second |")
    print("| --- | ---: |")
    print(f"| nginx static 200 with its access log, same wrk shape | {nginx['rps']:,.0f} (p99 {nginx['p99']:.2f} ms) |")
    print(f"| ES256 (P-256) signatures, openssl speed, {cores} processes | {sign:,.0f} |")
    print(f"| Argon2id verify (t=2, 19 MiB), C and libsodium, {cores} threads | {argon:.1f} |")
    print()

    print("CPU seconds over each measured load (wrk / server / database), of "
          f"{cores} cores × the run's length:")
    for t, name in cols + [("nginx", "nginx")]:
        for g in (("refresh", "cc") if t != "nginx" else ("",)):
            r = nginx if t == "nginx" else runs[(t, g)]
            c = r["cpu"]
            if not c:
                continue
            total = cores * c.get("elapsed", 1)
            total = c.get("machine_total", total)
            ours = c.get("wrk", 0) + c.get("server", 0) + c.get("db", 0)
            parts = f"wrk {c.get('wrk', 0):.1f} s ({c.get('wrk', 0) / total:.0%}), server {c.get('server', 0):.1f} s ({c.get('server', 0) / total:.0%})"
            if c.get("db"):
                parts += f", PostgreSQL {c['db']:.1f} s ({c['db'] / total:.0%})"
            if "machine_busy" in c:
                others = max(0.0, c["machine_busy"] - ours)
                parts += f", other processes {others:.1f} s ({others / total:.0%}), idle {(total - c['machine_busy']) / total:.0%}"
            print(f"  {name} {g}: {parts}, of {total:.1f} s")
    for kind, label in (("refresh_token", "a refresh-token grant"), ("client_credentials", "a client_credentials grant")):
        if stmts[kind]:
            each = stmts[kind]
            print(f"PostgreSQL statements for {label} (100 one after another, log_statement=all): {sum(n for n, _ in each)} a grant, "
                  f"{sum(n for n, text in each if text.startswith('BEGIN'))} transactions:")
            for n, text in each:
                print(f"    {n} × {text[:100]}")
    for t, name in cols:
        for g in ("refresh", "cc"):
            if runs[(t, g)]["last_error"]:
                print(f"  {name} {g}: last error: {runs[(t, g)]['last_error']}")
        if logs.get(t) and (logs[t].get("server_5xx") or logs[t].get("server_errors")):
            print(f"  {name}: the server's log has {logs[t].get('server_5xx', 0):.0f} answers 5xx and {logs[t].get('server_errors', 0):.0f} error lines")
        if signin.get(t, {}).get("hosted_failure_examples"):
            print(f"  {name} hosted sign-in failures: {signin[t]['hosted_failure_examples']}")
    print()

    sq, pg, dot = runs[("sqlite", "refresh")], runs[("pg", "refresh")], runs[("dot", "refresh")]
    checks = [("refresh-token grants per core, SQLite", sq["rps"] / cores, ">= 1,200/s (10× Keycloak's 120 per vCPU)", lambda v: v >= 1200, "{:,.0f}/s")]
    checks.append(("  (the same per CPU-second of the server, which other processes on a shared machine do not take)", per_cpu(sq),
                   "(reported)", lambda v: True, "{:,.0f}/s"))
    if dot:
        checks.append(("refresh-token grants vs django-oauth-toolkit, SQLite", sq["rps"] / dot["rps"], ">= 20×", lambda v: v >= 20, "{:.1f}×"))
        checks.append(("  (the same per CPU-second of each server)", per_cpu(sq) / per_cpu(dot), "(reported)", lambda v: True, "{:.1f}×"))
    if signin.get("sqlite"):
        checks.append(("hosted sign-ins vs the Argon2id rate, SQLite", signin["sqlite"].get("hosted_signins_per_second", 0) / argon,
                       ">= 0.8×", lambda v: v >= 0.8, "{:.2f}×"))
        checks.append(("  (the same per CPU-second of the server, against Argon2id verifications per CPU-second)",
                       signin_per_cpu(signin["sqlite"]) / (argon / cores), "(reported)", lambda v: True, "{:.2f}×"))
    checks.append(("idle RSS with the provider on", rss["sqlite"], "< 64 MB", lambda v: v < 64, "{:.1f} MB"))
    if pg:
        checks.append(("refresh-token grants, PostgreSQL vs SQLite", pg["rps"] / sq["rps"], ">= 0.5×", lambda v: v >= 0.5, "{:.2f}×"))
    for label, value, target, ok, fmt in checks:
        verdict = "    " if target == "(reported)" else ("PASS" if ok(value) else "MISS")
        print(f"{verdict}  {label}: {fmt.format(value)}" + ("" if target == "(reported)" else f" (target {target})"))

    failed = [f"{name} {g}" for t, name in cols for g in ("refresh", "cc") if runs[(t, g)]["errors"]]
    failed += [f"{t} hosted sign-in" for t in signin if signin[t].get("hosted_failures")]
    if failed:
        print(f"FAILED: errors in {', '.join(failed)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
