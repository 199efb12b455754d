"""Email over SMTP with libcurl, against a real SMTP server on loopback (aiosmtpd) that
requires STARTTLS and AUTH: trifactord's verification email arrives with its headers
and both parts; a server that offers no STARTTLS gets nothing (the message waits in the
outbox for its retries, never sent in the clear, never lost)."""

import email
import email.policy
import re
import ssl
import subprocess
import tempfile
import time
from pathlib import Path

import pytest
import requests
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from conftest import _binary, _Daemon


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


def free_port() -> int:
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_smtp(handler, context=None, **kw):
    controller = Controller(handler, hostname="127.0.0.1", port=free_port(), tls_context=context, require_starttls=context is not None,
                            authenticator=authenticator if context else None, auth_required=context is not None,
                            auth_require_tls=True, **kw)
    controller.start()
    return controller


def trifactord_with_smtp(tmp: Path, url: str, ca: Path = None):
    password = tmp / "smtp-password"
    password.write_text("s3cret pass\n")
    password.chmod(0o600)
    args = ["--dev", "--listen", "127.0.0.1:0", "--database-url", f"sqlite:{tmp / 't.db'}", "--key-file", str(tmp / "k.key"),
            "--smtp-url", url, "--smtp-password-file", str(password), "--smtp-from", "Trifactor Bänk <noreply@example.com>"]
    if ca:
        args += ["--smtp-ca-file", str(ca)]
    return _Daemon(_binary(), args, tmp)


def test_a_verification_email_arrives_over_starttls_with_auth_headers_and_both_parts(tls):
    cert, context = tls
    inbox = Inbox()
    smtp = start_smtp(inbox, context)
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-smtp."))
    daemon = trifactord_with_smtp(tmp, f"smtp://trifactor@localhost:{smtp.port}", ca=cert)
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
        assert message["Subject"].startswith("Trifactor:")
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
