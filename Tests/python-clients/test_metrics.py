"""GET /metrics scraped as Prometheus does (bearer token, text format 0.0.4), parsed with
prometheus-client's own parser, and scraped by a real Prometheus: the counters move by exactly the
requests made."""

import json
import secrets
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from conftest import _binary, _run, free_port, plain_http_server, wait_until

PASSWORD = "metrics-correct-horse-battery"


@pytest.fixture(scope="module")
def metered():
    binary = _binary()
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-metrics."))
    token = secrets.token_hex(32)
    (tmp / "metrics-token").write_text(token + "\n")
    database_url = f"sqlite:{tmp / 't.db'}"
    created = json.loads(_run([binary, "keys", "create", "--name", "metrics", "--json", "--database-url", database_url]))
    with plain_http_server(tmp, ["--listen", "127.0.0.1:0", "--database-url", database_url, "--dev", "--key-file", str(tmp / "trifactor.key"),
                                 "--metrics-token-file", str(tmp / "metrics-token")], created["api_key"], created["api_secret"]) as srv:
        srv.metrics_token, srv.token_file, srv.tmp = token, tmp / "metrics-token", tmp
        yield srv


def scrape(srv) -> dict:
    """Every sample as {(name, frozenset(labels)): value}."""
    r = requests.get(srv.base_url + "/metrics", headers={"Authorization": f"Bearer {srv.metrics_token}"}, timeout=10)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    samples = {}
    for family in text_string_to_metric_families(r.text):
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples


def value(samples, name, **labels):
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_metrics_need_the_token_and_are_off_without_one(metered, http_server):
    assert requests.get(metered.base_url + "/metrics", timeout=5).status_code == 401
    wrong = requests.get(metered.base_url + "/metrics", headers={"Authorization": "Bearer " + "0" * 64}, timeout=5)
    assert wrong.status_code == 401 and wrong.headers["Content-Type"] == "application/problem+json"
    # A server started without TRIFACTOR_METRICS_TOKEN_FILE has no metrics to give.
    assert requests.get(http_server.base_url + "/metrics", timeout=5).status_code == 404


def test_counters_move_with_the_requests_made(metered):
    before = scrape(metered)
    email = "metered@example.com"
    metered.create_account(email, PASSWORD, "Metered")
    for _ in range(2):
        metered.expect(401, "POST", "/v1/sessions", {"email": email, "password": "not-the-password-at-all"})
    metered.sign_in(email, PASSWORD)
    # A phone verification to the UK, delivered by the dev phone, then its code entered.
    number = "447400123987"
    start = requests.post(metered.base_url + "/v2/verify", auth=(metered.api_key, metered.api_secret), timeout=10,
                          headers={"Idempotency-Key": "metered-start"}, json={"brand": "Acme", "workflow": [{"channel": "sms", "to": number}]})
    assert start.status_code == 202, start.text
    # Its repeat (an answer lost on the way) is replayed: no second verification, no second text.
    again = requests.post(metered.base_url + "/v2/verify", auth=(metered.api_key, metered.api_secret), timeout=10,
                          headers={"Idempotency-Key": "metered-start"}, json={"brand": "Acme", "workflow": [{"channel": "sms", "to": number}]})
    assert again.json() == start.json() and again.headers["Idempotent-Replayed"] == "true"
    # A keyed body far larger than any keyed operation takes is refused before any work, and counted.
    big = requests.post(metered.base_url + "/v2/verify", auth=(metered.api_key, metered.api_secret), timeout=10,
                        headers={"Idempotency-Key": "metered-big"},
                        json={"brand": "Acme", "workflow": [{"channel": "sms", "to": number}], "pad": {f"k{i}": i for i in range(3000)}})
    assert big.status_code == 413 and big.json()["code"] == "idempotent_body_too_large", big.text
    # The text must go out before its code is entered: a completed verification voids what is still unsent.
    deadline = time.monotonic() + 10
    while not any(m["channel"] == "sms" and m["status"] == "sent" for m in metered.outbox(number)):
        assert time.monotonic() < deadline, metered.outbox(number)
        time.sleep(0.05)
    code = metered.code_for(number)
    check = requests.post(metered.base_url + f"/v2/verify/{start.json()['request_id']}", json={"code": code},
                          auth=(metered.api_key, metered.api_secret), timeout=10)
    assert check.status_code == 200, check.text

    after = scrape(metered)

    def moved(name, **labels):
        return value(after, name, **labels) - value(before, name, **labels)

    assert moved("trifactor_signins_total", method="password", outcome="failure") == 2
    assert moved("trifactor_signins_total", method="pwd", outcome="success") == 1
    assert moved("trifactor_http_requests_total", route="/v1/sessions", method="POST", status="401") == 2
    assert moved("trifactor_http_requests_total", route="/v1/sessions", method="POST", status="201") == 1
    assert moved("trifactor_http_requests_total", route="/v2/verify/:id", method="POST", status="200") == 1
    assert moved("trifactor_http_request_duration_seconds_count", route="/v1/sessions", method="POST") == 3
    assert moved("trifactor_auth_events_total", kind="verify.completed", outcome="success") == 1
    assert moved("trifactor_verifications_24h", country="44", stage="started") == 1
    assert moved("trifactor_idempotent_requests_total", operation="POST /v2/verify", outcome="kept") == 1
    assert moved("trifactor_idempotent_requests_total", operation="POST /v2/verify", outcome="replayed") == 1
    assert moved("trifactor_idempotent_requests_total", operation="POST /v2/verify", outcome="refused") == 1
    assert moved("trifactor_verifications_24h", country="44", stage="completed") == 1
    # The verification email and the text went out through the dev phone.
    assert moved("trifactor_outbox_deliveries_total", channel="sms", provider="dev-phone", outcome="sent") == 1
    assert moved("trifactor_outbox_deliveries_total", channel="email", provider="dev-phone", outcome="sent") == 1
    assert value(after, "trifactor_outbox_messages", status="sent", channel="sms", provider="dev-phone") >= 1
    # Argon2id ran on the hashing pool: its waits were measured.
    assert moved("trifactor_worker_wait_seconds_count", pool="hashing") >= 4
    assert value(after, "trifactor_database_pool_wait_seconds_count") > value(before, "trifactor_database_pool_wait_seconds_count")
    assert value(after, "process_resident_memory_bytes") > 10_000_000
    assert value(after, "trifactor_http_connections_open") >= 1


def test_a_lockout_is_counted_once_and_refused_attempts_after_it(metered):
    email = "locked-metrics@example.com"
    metered.create_account(email, PASSWORD, "Locked")
    before = scrape(metered)
    statuses = [metered.call("POST", "/v1/sessions", {"email": email, "password": "wrong-wrong-wrong"}).status_code
                for _ in range(7)]
    assert statuses[:5] == [401] * 5 and statuses[5:] == [429, 429], statuses
    after = scrape(metered)
    assert value(after, "trifactor_signins_total", method="password", outcome="failure") \
        - value(before, "trifactor_signins_total", method="password", outcome="failure") == 5
    assert value(after, "trifactor_lockouts_total", step="password") - value(before, "trifactor_lockouts_total", step="password") == 2


def test_a_real_prometheus_scrapes_it_with_the_token_and_sees_the_counters_move(metered):
    """Debian's Prometheus (`make test` installs it), scraping every second with
    `authorization.credentials_file`; a second job with a wrong token is refused."""
    binary = shutil.which("prometheus")
    assert binary, "prometheus is missing: scripts/install-deps.sh test installs it"
    wrong = metered.tmp / "wrong-token"
    wrong.write_text("0" * 64)
    port = free_port()
    config = metered.tmp / "prometheus.yml"
    config.write_text(f"""
global: {{scrape_interval: 1s, scrape_timeout: 1s}}
scrape_configs:
  - job_name: trifactor
    authorization: {{credentials_file: {metered.token_file}}}
    static_configs: [{{targets: ["127.0.0.1:{metered.port}"]}}]
  - job_name: wrong-token
    authorization: {{credentials_file: {wrong}}}
    static_configs: [{{targets: ["127.0.0.1:{metered.port}"]}}]
""")
    process = subprocess.Popen([binary, f"--config.file={config}", f"--storage.tsdb.path={metered.tmp / 'tsdb'}",
                                f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    api = f"http://127.0.0.1:{port}/api/v1"
    try:
        def query(q):
            r = requests.get(api + "/query", params={"query": q}, timeout=5).json()
            return r["data"]["result"]

        def targets():
            try:
                return {t["labels"]["job"]: t for t in requests.get(api + "/targets", timeout=5).json()["data"]["activeTargets"]}
            except (requests.RequestException, ValueError, KeyError):
                return {}
        wait_until(lambda: targets().get("trifactor", {}).get("health") == "up" and targets().get("wrong-token", {}).get("health") == "down",
                   "Prometheus to scrape both jobs", timeout=30)
        assert "401" in targets()["wrong-token"]["lastError"]
        selector = 'trifactor_signins_total{job="trifactor",method="password",outcome="failure"}'
        before = sum(float(r["value"][1]) for r in query(selector))
        for _ in range(3):
            metered.expect(401, "POST", "/v1/sessions", {"email": "nobody-prom@example.com", "password": "not-the-password-at-all"})
        wait_until(lambda: sum(float(r["value"][1]) for r in query(selector)) == before + 3, "the three failures in Prometheus", timeout=15)
        # A histogram Prometheus can compute a quantile from, and the process gauges.
        assert query('histogram_quantile(0.99, sum by (le) (rate(trifactor_http_request_duration_seconds_bucket{job="trifactor"}[1m])))')
        assert float(query('process_resident_memory_bytes{job="trifactor"}')[0]["value"][1]) > 10_000_000
    finally:
        process.terminate()
        process.wait(timeout=15)
