#!/usr/bin/env python3
"""Helpers of bench/verify.sh. Standard library only.

  verify_replay.py pairs BASE KEY SECRET N    N /v2/verify start + check pairs one after another
  verify_replay.py count LOG N                statements a pair in a log_statement=all log of N pairs
  verify_replay.py script LOG                 the last pair's statements as a pgbench script
  verify_replay.py line DB ROUND OUT SECONDS  one measurement (load.py's output with CPU seconds)
  verify_replay.py ratio SQLITE_OUT PG_OUT SECONDS
"""
import re
import sys

ENTRY = re.compile(
    r"^\S+ \S+ UTC \[(\d+)\] LOG:  (?:statement|execute [^:]*): (.*?)\n"
    r"(?:\S+ \S+ UTC \[\d+\] DETAIL:  parameters: (.*?)\n)?(?=\S+ \S+ UTC \[|\Z)",
    re.S | re.M)


def pairs(base, key, secret, n):
    sys.dont_write_bytecode = True  # no __pycache__ beside the bench
    import load
    c = load.Client(base)
    for i in range(int(n)):
        number = f"4474001{1999 - i:05d}"
        status, started = c.call("POST", "/v2/verify", {"brand": "Bench", "workflow": [{"channel": "sms", "to": number}]},
                                 basic=(key, secret))
        assert status == 202, (status, started)
        status, checked = c.call("POST", f"/v2/verify/{started['request_id']}", {"code": "1234"}, basic=(key, secret))
        assert status == 200, (status, checked)


def entries(log):
    """(pid, sql on one line, {n: literal}) for each logged statement, in log order."""
    out = []
    for pid, sql, params in ENTRY.findall(open(log).read()):
        values = dict(re.findall(r"\$(\d+) = (NULL|'(?:[^']|'')*')", params or ""))
        out.append((pid, " ".join(sql.split()), values))
    return out


def count(log, n):
    """Statements by text, keeping those run at least once a pair (the pollers' few fall out)."""
    n = int(n)
    texts = {}
    for _, sql, _ in entries(log):
        texts[sql[:100]] = texts.get(sql[:100], 0) + 1
    per_pair = {t: c // n for t, c in texts.items() if c // n > 0}
    transactions = per_pair.get("BEGIN", 0) + per_pair.get("BEGIN READ ONLY", 0)
    print(f"PostgreSQL statements a start + check ({n} pairs one after another, log_statement=all): "
          f"{sum(per_pair.values())} a pair, {transactions} in BEGIN … COMMIT")
    for t, c in sorted(per_pair.items(), key=lambda x: (-x[1], x[0])):
        print(f"  {c} × {t}")


def script(log):
    """The last pair: its start's and its check's transactions, and two key look-ups, parameters inlined,
    the request id and the number made unique per pgbench transaction (:n)."""
    es = entries(log)
    start = max(i for i, e in enumerate(es) if e[1].startswith("INSERT INTO verify_requests"))
    pid, _, values = es[start]
    request_id, number = values["1"].strip("'"), values["5"].strip("'").split(":")[-1]

    def block(i, pid):  # the BEGIN … COMMIT around entry i on backend pid
        mine = [j for j, e in enumerate(es) if e[0] == pid]
        at = mine.index(i)
        first = max(j for j in mine[: at + 1] if es[j][1].startswith("BEGIN"))
        last = min(j for j in mine[at:] if es[j][1] == "COMMIT")
        return [es[j] for j in mine if first <= j <= last]

    check = min(i for i, e in enumerate(es) if i > start and e[1].startswith("UPDATE verify_requests SET version = version")
                and e[2].get("1", "").strip("'") == request_id)
    lookup = next(e for e in reversed(es[:start]) if "FROM api_keys WHERE api_key" in e[1])
    statements = [lookup] + block(start, pid) + [lookup] + block(check, es[check][0])

    def inline(sql, values):
        sql = re.sub(r"\$(\d+)", lambda m: values[m.group(1)], sql)
        # The request and its number vary per transaction; pgbench reads ':name' in literals as a variable.
        return re.sub(r"'(?:[^']|'')*'", lambda m: m.group(0).replace(":", "-").replace(request_id, "' || :n || '")
                      .replace(number, "' || :n || '"), sql)

    print("\\set n random(1, 9000000000000000000)")
    for _, sql, values in statements:
        print(inline(sql, values) + ";")


def figures(path):
    out = {}
    for line in open(path):
        parts = line.split(None, 1)
        if len(parts) == 2:
            try:
                out[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return out


def line(db, r, out, seconds):
    f = figures(out)
    done = f["verifications_per_second"] * float(seconds)
    cpu = f["server_cpu"] + f["db_cpu"]
    print(f"{'SQLite' if db == 'sqlite' else 'PostgreSQL'} (round {r}): {f['verifications_per_second']:,.0f} start + check/s, "
          f"p50 {f['verifications_p50_ms']:.1f} ms, failures {f['verifications_failures']:.0f}; CPU a pair: trifactord "
          f"{f['server_cpu'] / done * 1000:.3f} ms + PostgreSQL {f['db_cpu'] / done * 1000:.3f} ms; {done / cpu:,.0f} pairs "
          f"per CPU-second; others {(f['machine_busy'] - cpu) / f['machine_total'] * 100:.0f}%, idle "
          f"{(1 - f['machine_busy'] / f['machine_total']) * 100:.0f}% of the machine")


def ratio(sqlite, pg, seconds):
    s, p = figures(sqlite), figures(pg)
    per_cpu = lambda f: f["verifications_per_second"] * float(seconds) / (f["server_cpu"] + f["db_cpu"])
    print(f"  PostgreSQL / SQLite: {p['verifications_per_second'] / s['verifications_per_second']:.2f} "
          f"({per_cpu(p) / per_cpu(s):.2f} per CPU-second)")


if __name__ == "__main__":
    {"pairs": pairs, "count": count, "script": script, "line": line, "ratio": ratio}[sys.argv[1]](*sys.argv[2:])
