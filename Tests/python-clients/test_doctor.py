"""`trifactord doctor` against real deployments on loopback: a sound one passes (exit 0), and each planted
misconfiguration is found, named in one sentence with its fix, with exit 1 (warnings) or 2 (errors).

The proxies in front are small HTTP relays in this file that connect to trifactord from 127.0.0.2, so the
doctor's own address (127.0.0.1) is never the proxy's: one appends the address it saw to X-Forwarded-For (as
nginx's $proxy_add_x_forwarded_for does), one passes the client's header on untouched (nginx's default), one
drops it."""
import base64
import datetime
import http.client
import http.server
import json
import os
import resource
import shutil
import socket
import sqlite3
import ssl
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from conftest import _binary, free_port, plain_http_server, wait_until


def doctor(*args, env=None, cwd=None):
    """Runs `trifactord doctor --json ARGS`; returns (exit code, report, {check: [(status, detail)]})."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("TRIFACTOR_")}
    environment.update(env or {})
    p = subprocess.run([_binary(), "doctor", "--json", *args], capture_output=True, text=True, timeout=60,
                       env=environment, cwd=cwd)
    report = json.loads(p.stdout)
    by_check = {}
    for finding in report["checks"]:
        by_check.setdefault(finding["check"], []).append((finding["status"], finding["detail"]))
    return p.returncode, report, by_check


def statuses(by_check, check):
    return [status for status, _ in by_check.get(check, [])]


def details(by_check, check):
    return " | ".join(detail for _, detail in by_check.get(check, []))


@pytest.fixture
def deployment():
    """A migrated SQLite database and a private key file in a fresh folder; the settings that point at them."""
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-doctor."))
    db, key = tmp / "t.db", tmp / "trifactor.key"
    args = ["--database-url", f"sqlite:{db}", "--key-file", str(key)]
    subprocess.run([_binary(), "migrate", *args], check=True, capture_output=True, timeout=60)
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"k1 2026-12-06T00:00:00Z " + base64.b64encode(os.urandom(32)) + b"\n")
    os.close(fd)
    yield tmp, db, key, args
    shutil.rmtree(tmp, ignore_errors=True)


class SMTPListener:
    """An SMTP server's opening: the greeting, EHLO offering STARTTLS and AUTH, STARTTLS with `certificate`.
    Remembers the verbs it heard: the doctor must never sign in."""

    def __init__(self, certificate, key):
        self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.tls.load_cert_chain(certificate, key)
        self.heard = []
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.talk, args=(conn,), daemon=True).start()

    def talk(self, conn):
        conn.sendall(b"220 mail.test ESMTP\r\n")
        secure = False
        try:
            while True:
                line = b""
                while not line.endswith(b"\n"):
                    chunk = conn.recv(1)
                    if not chunk:
                        return
                    line += chunk
                verb = line[:8].split(b" ")[0].strip().upper().decode()
                self.heard.append(verb)
                if verb in ("EHLO", "HELO"):
                    conn.sendall(b"250-mail.test\r\n250-AUTH PLAIN LOGIN\r\n" + (b"" if secure else b"250-STARTTLS\r\n")
                                 + b"250 8BITMIME\r\n")
                elif verb == "STARTTLS":
                    conn.sendall(b"220 go ahead\r\n")
                    conn = self.tls.wrap_socket(conn, server_side=True)
                    secure = True
                elif verb == "QUIT":
                    conn.sendall(b"221 bye\r\n")
                    return
                else:
                    conn.sendall(b"535 no\r\n")
        except (OSError, ssl.SSLError):
            return
        finally:
            conn.close()


def serve(args, port):
    """trifactord serve on 127.0.0.1:PORT with `args` (its own scratch folder, removed after; the deployment's
    files stay); a context manager."""
    return plain_http_server(Path(tempfile.mkdtemp(prefix="trifactor-doctor-serve.")),
                             [*args, "--listen", f"127.0.0.1:{port}"])


class Relay(http.server.ThreadingHTTPServer):
    """A reverse proxy for GET on loopback that reaches trifactord from 127.0.0.2."""

    def __init__(self, upstream_port, forwarding):
        self.upstream_port, self.forwarding = upstream_port, forwarding  # "append", "pass" or "drop"
        super().__init__(("127.0.0.1", 0), RelayHandler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.server_address[1]}"


class RelayHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
        if self.server.forwarding != "pass":
            claimed = self.headers.get("X-Forwarded-For")
            headers = {k: v for k, v in headers.items() if k.lower() != "x-forwarded-for"}
            if self.server.forwarding == "append":
                seen = self.client_address[0]
                headers["X-Forwarded-For"] = f"{claimed}, {seen}" if claimed else seen
        upstream = http.client.HTTPConnection("127.0.0.1", self.server.upstream_port, timeout=10,
                                              source_address=("127.0.0.2", 0))
        upstream.request("GET", self.path, headers=headers)
        answer = upstream.getresponse()
        body = answer.read()
        self.send_response(answer.status)
        for name, value in answer.getheaders():
            if name.lower() not in ("connection", "transfer-encoding", "content-length"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_sound_deployment_passes_with_exit_0(deployment):
    tmp, db, key, args = deployment
    mail_cert, mail_key = make_certificate(tmp, host="127.0.0.1", days_from=-1, days_to=90)
    smtp = SMTPListener(mail_cert, mail_key)
    port = free_port()
    settings = [*args, "--public-url", f"http://127.0.0.1:{port}", "--smtp-url", f"smtp://doctor@127.0.0.1:{smtp.port}",
                "--smtp-ca-file", mail_cert]
    with serve(settings, port):
        code, report, by = doctor(*settings)
    assert code == 0, [c for c in report["checks"] if c["status"] != "ok"]
    assert report["status"] == "ok"
    assert statuses(by, "public_url") == ["ok"] and "reaches this deployment" in details(by, "public_url")
    assert "No proxy" in details(by, "proxy")
    assert statuses(by, "delivery") == ["ok"] and "over TLS" in details(by, "delivery")
    # The mail server's opening, over TLS, and never a sign-in (the doctor has no business there).
    assert smtp.heard[:3] == ["EHLO", "STARTTLS", "EHLO"] and "AUTH" not in smtp.heard, smtp.heard
    assert statuses(by, "migrations") == ["ok"]
    assert "covers its 1024 connections" in details(by, "file_limit")


def test_the_human_output_is_one_sentence_per_check(deployment):
    tmp, db, key, args = deployment
    p = subprocess.run([_binary(), "doctor", *args], capture_output=True, text=True, timeout=60,
                       env={k: v for k, v in os.environ.items() if not k.startswith("TRIFACTOR_")})
    lines = p.stdout.strip().splitlines()
    assert lines[-1].endswith("found (warnings only).") and p.returncode == 1
    assert any(line.startswith("warning  delivery: No email server") for line in lines), lines


def test_private_files_made_readable_are_errors(deployment):
    tmp, db, key, args = deployment
    os.chmod(key, 0o644)
    code, _, by = doctor(*args)
    assert code == 2 and statuses(by, "key_file") == ["error"]
    assert f"chmod 600 {key}" in details(by, "key_file")
    os.chmod(key, 0o600)
    os.chmod(db, 0o644)
    code, _, by = doctor(*args)
    assert code == 2 and "error" in statuses(by, "database")
    assert f"chmod 600 {db}" in details(by, "database")
    os.chmod(db, 0o600)
    token = tmp / "metrics.token"
    token.write_text("a" * 32)
    os.chmod(token, 0o644)
    code, _, by = doctor(*args, "--metrics-token-file", str(token))
    assert code == 2 and f"chmod o-rwx {token}" in details(by, "files")


def test_a_missing_key_file_is_named(deployment):
    tmp, db, key, args = deployment
    key.unlink()
    code, _, by = doctor(*args)
    assert code >= 1 and statuses(by, "key_file") == ["warning"]
    assert f"There is no key file at {key}" in details(by, "key_file")


def test_copies_made_before_migrations_are_named_once_a_month_old(deployment):
    tmp, db, key, args = deployment
    copy = tmp / "t.db.before-v14.20261001T000000Z"
    copy.write_bytes(b"x" * 2_097_152)
    os.chmod(copy, 0o600)
    _, _, by = doctor(*args)
    assert "before migrations" not in details(by, "database")
    month_ago = time.time() - 31 * 86_400
    os.utime(copy, (month_ago, month_ago))
    code, _, by = doctor(*args)
    assert "1 copy of the database made before migrations (2.0 MiB)" in details(by, "database"), by
    assert "delete those you no longer need" in details(by, "database")


def test_pending_migrations_are_named_with_what_serve_will_do(deployment):
    tmp, db, key, args = deployment
    with sqlite3.connect(db) as c:
        newest, name = c.execute("SELECT version, name FROM schema_migrations ORDER BY version DESC LIMIT 1").fetchone()
        c.execute("DELETE FROM schema_migrations WHERE version = ?", (newest,))
    code, _, by = doctor(*args)
    assert code == 1 and statuses(by, "migrations") == ["warning"]
    assert f"{newest} ({name})" in details(by, "migrations") and "copies the database" in details(by, "migrations")
    code, _, by = doctor(*args, "--migrate-on-start", "never")
    assert code == 2 and "serve will refuse" in details(by, "migrations")
    with sqlite3.connect(db) as c:
        c.execute("INSERT INTO schema_migrations (version, name) VALUES (?, 'from a newer build')", (newest + 100,))
    code, _, by = doctor(*args)
    assert code == 2 and "newer than this build" in details(by, "migrations")


def make_certificate(tmp, *, host, days_from, days_to):
    import ipaddress
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now + datetime.timedelta(days=days_from))
            .not_valid_after(now + datetime.timedelta(days=days_to))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address(host))] if host[0].isdigit() else [x509.DNSName(host)]), critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp / f"{host}-{days_to}.pem", tmp / f"{host}-{days_to}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    os.chmod(key_path, 0o600)
    return str(cert_path), str(key_path)


def test_tls_certificates_expired_expiring_mismatched_or_for_another_host(deployment):
    tmp, db, key, args = deployment
    public = ["--public-url", "https://auth.example.com"]
    expired, expired_key = make_certificate(tmp, host="auth.example.com", days_from=-30, days_to=-1)
    code, _, by = doctor(*args, "--tls-cert", expired, "--tls-key", expired_key)
    assert code == 2 and "expired on" in details(by, "tls") and "renew it" in details(by, "tls")
    soon, soon_key = make_certificate(tmp, host="auth.example.com", days_from=-80, days_to=5)
    code, _, by = doctor(*args, "--tls-cert", soon, "--tls-key", soon_key)
    assert statuses(by, "tls") == ["warning"] and "expires in 4 day(s)" in details(by, "tls")
    good, good_key = make_certificate(tmp, host="auth.example.com", days_from=-1, days_to=90)
    _, _, by = doctor(*args, "--tls-cert", good, "--tls-key", soon_key)
    assert "is not (or does not hold) the key of TRIFACTOR_TLS_CERT" in details(by, "tls")
    other, other_key = make_certificate(tmp, host="other.example.com", days_from=-1, days_to=90)
    _, _, by = doctor(*args, *public, "--tls-cert", other, "--tls-key", other_key)
    assert statuses(by, "tls") == ["ok", "warning"] and "does not name auth.example.com" in details(by, "tls")
    _, _, by = doctor(*args, *public, "--tls-cert", good, "--tls-key", good_key)
    assert statuses(by, "tls") == ["ok"]


def test_a_public_url_that_is_unreachable_or_another_server(deployment):
    tmp, db, key, args = deployment
    code, _, by = doctor(*args, "--public-url", f"http://127.0.0.1:{free_port()}")
    assert code == 2 and "cannot be reached from here" in details(by, "public_url")

    class Anything(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Anything)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        code, _, by = doctor(*args, "--public-url", f"http://127.0.0.1:{other.server_address[1]}")
    finally:
        other.shutdown()
    assert code == 2 and "is not this deployment" in details(by, "public_url")

    # This deployment's server, but with another key file: it cannot prove the key either.
    port = free_port()
    other_key = tmp / "other.key"
    fd = os.open(other_key, os.O_WRONLY | os.O_CREAT, 0o600)
    os.write(fd, base64.b64encode(os.urandom(32)) + b"\n")
    os.close(fd)
    served = [a if a != str(key) else str(other_key) for a in args]
    with serve([*served, "--public-url", f"http://127.0.0.1:{port}"], port):
        _, _, by = doctor(*args, "--public-url", f"http://127.0.0.1:{port}")
    assert "is not this deployment" in details(by, "public_url")


def test_forwarded_headers_are_trusted_from_the_proxy_and_from_nobody_else(deployment):
    tmp, db, key, args = deployment
    port = free_port()
    public = f"http://127.0.0.1:{port}"

    def through(forwarding, *extra):
        relay = Relay(port, forwarding)
        try:
            return doctor(*args, *extra, "--public-url", relay.url)
        finally:
            relay.shutdown()

    with serve([*args, "--public-url", public], port):
        # A proxy that appends the client's address, but that trifactord does not trust.
        code, _, by = through("append")
        assert code == 2 and "A proxy at 127.0.0.2 forwards requests" in details(by, "proxy")
        assert "Add 127.0.0.2 to TRIFACTOR_TRUSTED_PROXIES" in details(by, "proxy")
        # A relay that adds nothing (nginx without proxy_set_header, a TCP balancer): everyone is 127.0.0.2.
        code, _, by = through("pass")
        assert code == 2 and "the relay there adds no address" in details(by, "proxy"), by
        # One that drops the header.
        code, _, by = through("drop")
        assert code == 2 and "sends no X-Forwarded-For" in details(by, "proxy"), by

    trusted = ["--trusted-proxies", "127.0.0.2"]
    with serve([*args, "--public-url", public, *trusted], port):
        # Trusted, appending what it saw: the client's claim is never taken.
        code, _, by = through("append", *trusted)
        assert statuses(by, "proxy") == ["ok"] and "(127.0.0.1)" in details(by, "proxy"), by
        # Trusted, but passing the client's X-Forwarded-For on: anyone can forge an address.
        code, _, by = through("pass", *trusted)
        assert code == 2 and "was taken to come from 192.0.2.77" in details(by, "proxy"), by

    # The doctor on a trusted address itself (a proxy's own host): it cannot tell, and says so.
    with serve([*args, "--public-url", public, "--trusted-proxies", "127.0.0.1"], port):
        _, _, by = doctor(*args, "--public-url", public, "--trusted-proxies", "127.0.0.1")
    assert statuses(by, "proxy") == ["skipped"] and "run the doctor from a host outside" in details(by, "proxy"), by

    # Trusting a large part of the Internet is an error before any request is made.
    code, _, by = doctor(*args, "--trusted-proxies", "0.0.0.0/0")
    assert code == 2 and "trusts 0.0.0.0/0, a large part of the Internet (every address)" in details(by, "trusted_proxies")
    _, _, by = doctor(*args, "--trusted-proxies", "10.0.0.0/8,8.8.8.0/24")
    assert statuses(by, "trusted_proxies") == ["warning"] and "8.8.8.0/24" in details(by, "trusted_proxies")


DOCTOR_PATH = "/.well-known/trifactor-doctor"


def test_the_doctors_address_answers_only_a_fresh_proof_of_the_key_file(deployment):
    """Without the key file's proof (or with one already used) the address answers exactly as an unknown path."""
    import hashlib
    import hmac
    tmp, db, key, args = deployment
    port = free_port()
    with serve(args, port):
        def get(path, header=None):
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", path, headers={"Trifactor-Doctor": header} if header else {})
            r = c.getresponse()
            body = json.loads(r.read())
            body.pop("request_id", None)
            return r.status, body, dict(r.getheaders())

        unknown = get("/.well-known/nothing-here")
        assert unknown[0] == 404
        ring_key = base64.b64decode(key.read_text().split()[-1])
        derived = hmac.new(ring_key, b"trifactor doctor v1", hashlib.sha256).digest()
        at, nonce = int(time.time()), os.urandom(16).hex()
        good = hmac.new(derived, f"request\n{at}\n{nonce}".encode(), hashlib.sha256).hexdigest()
        wrong_key = hmac.new(os.urandom(32), f"request\n{at}\n{nonce}".encode(), hashlib.sha256).hexdigest()
        stale = hmac.new(derived, f"request\n{at - 120}\n{nonce}".encode(), hashlib.sha256).hexdigest()
        for header in (None, f"at={at};nonce={nonce};proof={wrong_key}", f"at={at - 120};nonce={nonce};proof={stale}",
                       "garbage", f"at={at};nonce={nonce};proof={good}" + "x" * 300):
            status, body, _ = get(DOCTOR_PATH, header)
            assert (status, body) == unknown[:2], header
        status, body, headers = get(DOCTOR_PATH, f"at={at};nonce={nonce};proof={good}")
        assert status == 200 and body["peer"] == "127.0.0.1" and "Trifactor-Doctor-Proof" in headers, body
        # The same header again (a replay within the window) gets nothing more.
        assert get(DOCTOR_PATH, f"at={at};nonce={nonce};proof={good}")[:2] == unknown[:2]


def test_a_public_url_that_redirects(deployment):
    tmp, db, key, args = deployment

    class Redirect(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            self.send_response(301)
            self.send_header("Location", "https://auth.example.com/")
            self.send_header("Content-Length", "0")
            self.end_headers()

    other = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        code, _, by = doctor(*args, "--public-url", f"http://127.0.0.1:{other.server_address[1]}")
    finally:
        other.shutdown()
    assert code == 2 and "redirects (HTTP 301) to https://auth.example.com/" in details(by, "public_url")


def test_a_file_limit_below_the_connection_limit(deployment):
    tmp, db, key, args = deployment
    port = free_port()
    settings = [*args, "--public-url", f"http://127.0.0.1:{port}", "--max-connections", "2000"]
    daemon = subprocess.Popen([_binary(), "serve", *settings, "--listen", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (512, 512)))
    try:
        wait_until(lambda: _ready(port), "serve under a 512-file limit")
        code, _, by = doctor(*settings)
    finally:
        daemon.terminate()
        daemon.wait(timeout=20)
    assert code == 2 and "may open 512 files but accepts 2000 connections" in details(by, "file_limit")
    assert "LimitNOFILE=" in details(by, "file_limit")


def _ready(port):
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
        c.request("GET", "/ready")
        return c.getresponse().status == 200
    except OSError:
        return False


def test_unreachable_delivery_and_settings_mistakes(deployment):
    tmp, db, key, args = deployment
    code, _, by = doctor(*args, "--smtp-url", f"smtp://doctor@127.0.0.1:{free_port()}")
    assert code == 2 and "The SMTP server 127.0.0.1 cannot be reached" in details(by, "delivery")
    code, _, by = doctor(*args, "--dev")
    assert code == 2 and "TRIFACTOR_DEV is on" in details(by, "settings")
    code, report, by = doctor(*args, "--max-connections", "lots")
    assert code == 2 and report["status"] == "error" and "cannot be read" in details(by, "settings")
    code, _, by = doctor(*args, env={"TRIFACTOR_RP_ID": "bank.example"})
    assert "TRIFACTOR_RP_ID is now TRIFACTOR_WEBAUTHN_RP_ID" in details(by, "settings")
    _, _, by = doctor(*args, env={"TRIFACTOR_RP_ID": "old.example", "TRIFACTOR_WEBAUTHN_RP_ID": "bank.example"})
    assert "TRIFACTOR_RP_ID is ignored" in details(by, "settings")
    _, _, by = doctor(*args, "--rp-id", "bank.example")
    assert "--rp-id is now --webauthn-rp-id" in details(by, "settings")


def test_the_clock_against_postgresql():
    url = os.environ.get("TRIFACTOR_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("no PostgreSQL (run through scripts/with-postgres.sh, as make test does)")
    _, _, by = doctor("--database-url", url)
    assert statuses(by, "clock") == ["ok"], by
    code, _, by = doctor("--database-url", url, "--clock-offset", "120")
    assert code == 2 and statuses(by, "clock") == ["error"] and "+120" in details(by, "clock"), by


def test_clients_stranded_by_the_fapi2_switch_are_named(deployment):
    tmp, db, key, args = deployment
    subprocess.run([_binary(), "clients", "create", "--name", "Old app", "--id", "old-app", "--redirect-uris",
                    "https://app.example/cb", *args], check=True, capture_output=True, timeout=60)
    fapi = ["--oidc", "1", "--public-url", "https://auth.example.com", "--oidc-fapi2", "1"]
    code, _, by = doctor(*args, *fapi)
    assert "1 client(s) cannot sign in under it (no private_key_jwt): old-app" in details(by, "clients"), by
    _, _, by = doctor(*args, "--oidc", "1", "--public-url", "https://auth.example.com")
    assert "clients" not in by
