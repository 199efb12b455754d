"""Email over SMTP with libcurl, against a real SMTP server on loopback (aiosmtpd) that
requires STARTTLS and AUTH: trifactord's verification email arrives with its headers
and both parts; a server that offers no STARTTLS gets nothing (the message waits in the
outbox for its retries, never sent in the clear, never lost)."""

import email
import sqlite3
import email.policy
import re
import ssl
import subprocess
import tempfile
import time
from pathlib import Path

import pyotp
import pytest
import requests
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from conftest import _binary, _Daemon, free_port, wait_until


class Inbox:
    def __init__(self):
        self.messages = []

    async def handle_DATA(self, server, session, envelope):
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.content, session.authenticated,
                              session.ssl is not None))
        return "250 OK"


def authenticator(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and auth_data.login == b"trifactor" and auth_data.password == b"s3cret pass"
    return AuthResult(success=ok)


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    folder = tmp_path_factory.mktemp("smtp-tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", str(key),
                    "-out", str(cert), "-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, capture_output=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(str(cert), str(key))
    return cert, context




def start_smtp(handler, context=None, **kw):
    controller = Controller(handler, hostname="127.0.0.1", port=free_port(), tls_context=context, require_starttls=context is not None,
                            authenticator=authenticator if context else None, auth_required=context is not None,
                            auth_require_tls=True, **kw)
    controller.start()
    return controller


def trifactord_with_smtp(tmp: Path, url: str, ca: Path = None, extra=()):
    password = tmp / "smtp-password"
    password.write_text("s3cret pass\n")
    password.chmod(0o600)
    args = ["--dev", "--listen", "127.0.0.1:0", "--database-url", f"sqlite:{tmp / 't.db'}", "--key-file", str(tmp / "k.key"),
            "--smtp-url", url, "--smtp-password-file", str(password), "--smtp-from", "Trifactor Bänk <noreply@example.com>"]
    if ca:
        args += ["--smtp-ca-file", str(ca)]
    return _Daemon(_binary(), args + list(extra), tmp)


def test_a_verification_email_arrives_over_starttls_with_auth_headers_and_both_parts(tls):
    cert, context = tls
    inbox = Inbox()
    smtp = start_smtp(inbox, context)
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-smtp."))
    daemon = trifactord_with_smtp(tmp, f"smtp://trifactor@localhost:{smtp.port}", ca=cert,
                                  extra=["--smtp-reply-to", "Hilfe Bänk <help@example.com>"])
    try:
        r = requests.post(f"http://127.0.0.1:{daemon.port}/v1/accounts", json={"email": "zoë@example.com", "password": "correct horse battery"}, timeout=10)
        assert r.status_code == 202, r.text
        deadline = time.monotonic() + 10
        while not inbox.messages and time.monotonic() < deadline:
            time.sleep(0.1)
        assert inbox.messages, "no email arrived; trifactord log:\n" + "\n".join(daemon.lines[-20:])
        sender, recipients, content, authenticated, encrypted = inbox.messages[0]
        assert authenticated and encrypted
        assert sender == "noreply@example.com" and recipients == ["zoë@example.com"]
        message = email.message_from_bytes(content, policy=email.policy.default)
        assert str(message["From"]) == "Trifactor Bänk <noreply@example.com>"
        assert message["Date"] and re.fullmatch(r"<[^@>]+@example\.com>", message["Message-ID"])
        assert str(message["Reply-To"]) == "Hilfe Bänk <help@example.com>"
        assert message["Subject"] == "Trifactor: your verification code"
        plain = message.get_body(("plain",)).get_content()
        html = message.get_body(("html",)).get_content()
        code = re.search(r"\d{6}", plain).group()
        assert code in html
        # The code verifies the address: the email was the real one.
        r = requests.post(f"http://127.0.0.1:{daemon.port}/v1/accounts/verify-email", json={"email": "zoë@example.com", "code": code}, timeout=10)
        assert r.status_code == 200, r.text
    finally:
        daemon.stop()
        smtp.stop()


def test_a_server_without_starttls_gets_nothing_and_the_message_waits_for_its_retries():
    inbox = Inbox()
    smtp = start_smtp(inbox)  # plain, no STARTTLS offered
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-smtp."))
    daemon = trifactord_with_smtp(tmp, f"smtp://trifactor@localhost:{smtp.port}")
    try:
        r = requests.post(f"http://127.0.0.1:{daemon.port}/v1/accounts", json={"email": "plain@example.com", "password": "correct horse battery"}, timeout=10)
        assert r.status_code == 202
        time.sleep(3)
        assert inbox.messages == []
        outbox = requests.get(f"http://127.0.0.1:{daemon.port}/dev/outbox", params={"to": "plain@example.com"}, timeout=5).json()["messages"]
        assert outbox and outbox[0]["status"] in ("pending", "sending"), outbox
    finally:
        daemon.stop()
        smtp.stop()


def wait_for(predicate, what, timeout=20.0, lines=()):
    return wait_until(predicate, what, timeout, lines)


class Refusing(Inbox):
    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        return "550 5.1.1 mailbox unavailable"


@pytest.mark.parametrize("failure", ["refused recipient", "server down", "untrusted certificate"])
def test_a_failing_delivery_is_retried_then_failed_and_audited_never_lost(tls, failure):
    cert, context = tls
    smtp = None
    if failure == "refused recipient":
        smtp = start_smtp(Refusing(), context)
        url, ca = f"smtp://trifactor@localhost:{smtp.port}", cert
    elif failure == "server down":
        url, ca = f"smtp://trifactor@localhost:{free_port()}", cert
    else:
        smtp = start_smtp(Inbox(), context)
        url, ca = f"smtp://trifactor@localhost:{smtp.port}", None  # the system's CAs do not know the test certificate
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-smtp."))
    db = tmp / "t.db"
    daemon = trifactord_with_smtp(tmp, url, ca=ca, extra=["--delivery-attempts", "2"])
    address = "nobody@example.com"
    try:
        r = requests.post(f"http://127.0.0.1:{daemon.port}/v1/accounts", json={"email": address, "password": "correct horse battery"}, timeout=10)
        assert r.status_code == 202
        outbox = lambda: requests.get(f"http://127.0.0.1:{daemon.port}/dev/outbox", params={"to": address}, timeout=5).json()["messages"]
        # First a retry is scheduled, then the second try fails for good (2 s later).
        wait_for(lambda: any(m["status"] == "failed" for m in outbox()), "the failure", lines=daemon.lines)
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            rows = conn.execute("SELECT status, attempts, last_error FROM outbox WHERE recipient = ?", (address,)).fetchall()
            audited = conn.execute("SELECT detail FROM audit_log WHERE kind = 'delivery.failed'").fetchall()
        assert rows and rows[0][0] == "failed" and rows[0][1] == 2 and rows[0][2].startswith("SMTP"), rows
        assert len(audited) == 1 and audited[0][0].startswith("email "), audited
        assert not any("correct horse" in line for line in daemon.lines)
    finally:
        daemon.stop()
        if smtp:
            smtp.stop()


def test_recovery_code_and_new_device_emails_arrive_in_the_users_language(tls):
    cert, context = tls
    inbox = Inbox()
    smtp = start_smtp(inbox, context)
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-smtp."))
    daemon = trifactord_with_smtp(tmp, f"smtp://trifactor@localhost:{smtp.port}", ca=cert)
    base = f"http://127.0.0.1:{daemon.port}"
    address, password = "ana@example.com", "correct horse battery"
    laptop = {"User-Agent": "Mozilla/5.0 (X11; Linux x86_64) laptop"}
    phone = {"User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) phone"}

    def mail(n):
        wait_for(lambda: len(inbox.messages) >= n, f"email #{n}", timeout=10, lines=daemon.lines)
        return email.message_from_bytes(inbox.messages[n - 1][2], policy=email.policy.default)

    def call(method, path, body=None, token=None, headers=laptop, status=None):
        h = dict(headers, **({"Authorization": f"Bearer {token}"} if token else {}))
        r = requests.request(method, base + path, json=body, headers=h, timeout=10)
        assert status is None or r.status_code == status, f"{method} {path} -> {r.status_code} {r.text}"
        return r.json() if r.content else None

    try:
        call("POST", "/v1/accounts", {"email": address, "password": password, "locale": "es-es"}, status=202)
        verification = mail(1)
        assert verification["Subject"] == "Trifactor: su código de verificación", verification["Subject"]
        code = re.search(r"\d{6}", verification.get_body(("plain",)).get_content()).group()
        call("POST", "/v1/accounts/verify-email", {"email": address, "code": code}, status=200)
        token = call("POST", "/v1/sessions", {"email": address, "password": password}, status=201)["token"]
        started = call("POST", "/v1/mfa/enrollments", {"kind": "totp"}, token=token, status=202)
        totp = pyotp.TOTP(started["secret"])
        call("POST", f"/v1/mfa/enrollments/{started['enrollment_session']}", {"code": totp.now(), "display_name": "App"}, token=token, status=201)
        # A session at AAL2 (the next step's code) may create recovery codes.
        pending = call("POST", "/v1/sessions", {"email": address, "password": password}, status=200)
        totp_id = next(h["enrollment_id"] for h in pending["hints"] if h["kind"] == "totp")
        token = call("POST", "/v1/sessions/mfa", {"pending_credential": pending["pending_credential"], "enrollment_id": totp_id,
                                                  "code": totp.at(time.time() + 30)}, status=201)["token"]
        codes = call("POST", "/v1/mfa/recovery-codes", token=token, status=201)["codes"]
        assert len(inbox.messages) == 1, "signing in again from the same device sends no email"

        # From a new device, with a recovery code: two emails, both in Spanish.
        pending = call("POST", "/v1/sessions", {"email": address, "password": password}, headers=phone, status=200)
        recovery_id = next(h["enrollment_id"] for h in pending["hints"] if h["kind"] == "recovery_code")
        call("POST", "/v1/sessions/mfa", {"pending_credential": pending["pending_credential"], "enrollment_id": recovery_id,
                                          "code": codes[0]}, headers=phone, status=201)
        subjects = {str(mail(2)["Subject"]), str(mail(3)["Subject"])}
        assert subjects == {"Trifactor: se ha usado un código de recuperación", "Trifactor: nuevo inicio de sesión en su cuenta"}, subjects
        bodies = [m.get_body(("plain",)).get_content() for m in (mail(2), mail(3))]
        assert any("iPhone" in b and "127.0.0.1" in b for b in bodies), bodies
        assert any(": 9" in b for b in bodies), "the recovery email says how many codes are left"
        for m in (mail(2), mail(3)):
            assert m["To"] == address and m["Message-ID"] and m["Date"]
    finally:
        daemon.stop()
        smtp.stop()
