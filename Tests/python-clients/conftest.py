"""Harness for driving trifactord with published clients (vonage, pyotp, Playwright, soft-webauthn).

`server`: one per session, a temp dir with a self-signed certificate for
localhost, an API key made with `trifactord keys create`, and
`trifactord serve --dev` over TLS on a free port. The SDK always speaks
https, so the certificate is trusted through REQUESTS_CA_BUNDLE.

`http_server`: one per session, `trifactord serve --dev` over plain HTTP on a
free port, for the passkey (WebAuthn) tests: its pages at `http://localhost:PORT`
are a secure context and that origin is allowed in dev mode.
"""

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests
from vonage import Auth, HttpClientOptions, Vonage

START_TIMEOUT = 20.0
STOP_TIMEOUT = 15.0


@dataclass
class Server:
    """A running trifactord: its port, credentials, certificate and stderr."""

    process: subprocess.Popen
    port: int
    api_key: str
    api_secret: str
    cert: "str | None"  # None: plain HTTP
    lines: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    scheme: str = "https"

    @property
    def host(self) -> str:
        return f"localhost:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.scheme}://{self.host}"

    @property
    def origin(self) -> str:
        """The WebAuthn origin of pages served by this server."""
        return self.base_url

    def client(self, api_key=None, api_secret=None) -> Vonage:
        """A Vonage SDK client pointed at this server (other credentials on request)."""
        return Vonage(
            Auth(api_key=api_key or self.api_key, api_secret=api_secret or self.api_secret),
            HttpClientOptions(api_host=self.host, timeout=10),
        )

    def call(self, method: str, path: str, body=None, token=None) -> requests.Response:
        """One JSON request to this server (Bearer `token` when given)."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return requests.request(method, self.base_url + path, json=body, headers=headers,
                                verify=self.cert or True, timeout=10)

    def expect(self, status: int, method: str, path: str, body=None, token=None):
        """The answer's JSON (None when empty), asserting its status."""
        r = self.call(method, path, body, token)
        shown = {k: ("…" if k == "password" else v) for k, v in body.items()} \
            if isinstance(body, dict) else body
        assert r.status_code == status, (
            f"{method} {path} {shown} -> {r.status_code} {r.headers.get('Content-Type')} {r.text}"
        )
        return r.json() if r.content else None

    def create_account(self, email: str, password: str, display_name: str) -> None:
        """Sign up and verify the email with the 6-digit code from the dev outbox."""
        self.expect(202, "POST", "/v1/accounts",
                    {"email": email, "password": password, "display_name": display_name})
        text = self.wait_message(email, "email")["text"]
        m = re.search(r"(?<!\d)\d{6}(?!\d)", text)
        assert m, f"no 6-digit code in email text {text!r}"
        self.expect(200, "POST", "/v1/accounts/verify-email", {"email": email, "code": m.group(0)})

    def sign_in(self, email: str, password: str) -> str:
        """Password sign-in of a user without MFA: the AAL1 session's token."""
        created = self.expect(201, "POST", "/v1/sessions", {"email": email, "password": password})
        assert created.get("token"), created
        assert created["session"]["aal"] == 1, created
        return created["token"]

    def log_tail(self, n: int = 60) -> str:
        with self.lock:
            return "\n".join(self.lines[-n:])

    def outbox(self, to=None) -> list:
        """GET /dev/outbox[?to=NUMBER]: the messages, newest first."""
        params = {"to": to} if to else None
        r = requests.get(
            f"{self.base_url}/dev/outbox", params=params, verify=self.cert or True, timeout=5
        )
        assert r.status_code == 200, f"GET /dev/outbox -> {r.status_code} {r.text}"
        return r.json()["messages"]

    def wait_message(self, to: str, channel: str = "sms", timeout: float = 2.0,
                     exclude_ids=()) -> dict:
        """The newest `channel` message for `to` (polling up to `timeout` seconds)."""
        deadline = time.monotonic() + timeout
        while True:
            for m in self.outbox(to):
                if m["to"].lstrip("+") == to.lstrip("+") and m["channel"] == channel \
                        and m["id"] not in exclude_ids:
                    return m
            if time.monotonic() >= deadline:
                raise AssertionError(
                    f"no {channel} message for {to} in the dev outbox after {timeout}s; "
                    f"outbox for it: {self.outbox(to)}"
                )
            time.sleep(0.05)

    def code_for(self, to: str, timeout: float = 2.0) -> str:
        """The code in the newest SMS for `to`: the run of 4-10 digits in its text."""
        text = self.wait_message(to, "sms", timeout)["text"]
        return sms_code(text)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_until(predicate, what: str, timeout: float = 10.0, lines=()):
    """The first truthy value of `predicate()` within `timeout` seconds, else a failure with the log's tail."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{what} did not happen in {timeout}s; trifactord log:\n" + "\n".join(list(lines)[-20:]))


def sms_code(text: str) -> str:
    m = re.search(r"(?<!\d)\d{4,10}(?!\d)", text)
    assert m, f"no code (4-10 digits) in SMS text {text!r}"
    return m.group(0)


def voice_code(text: str) -> str:
    """The digits a voice message spells, separated by ', ' ("1, 2, 3, 4")."""
    m = re.search(r"(?<!\d)\d(?:, \d){3,9}(?!\d)", text)
    assert m, f"no spelled code ('1, 2, 3, 4') in voice text {text!r}"
    return m.group(0).replace(", ", "")


_current_servers = []  # the running servers, for their stderr tails in failure reports


def _binary() -> str:
    path = os.environ.get("TRIFACTORD", ".build/debug/trifactord")
    resolved = shutil.which(path) if os.sep not in path else path
    if not resolved or not os.access(resolved, os.X_OK):
        pytest.fail(
            f"TRIFACTORD={path!r} is not an executable: build it with "
            "`swift build --product trifactord` or set TRIFACTORD", pytrace=False
        )
    return os.path.abspath(resolved)


def _run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)
    if p.returncode != 0:
        pytest.fail(
            f"{' '.join(cmd)} exited {p.returncode}\nstdout: {p.stdout}\nstderr: {p.stderr}",
            pytrace=False,
        )
    return p.stdout


class _Daemon:
    """`trifactord serve` started with `args`, its stderr drained into `lines`."""

    def __init__(self, binary: str, args: list, tmp: Path):
        self.process = subprocess.Popen(
            [binary, "serve", *args],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            text=True, errors="replace",
        )
        self.lines, self.lock = [], threading.Lock()
        listening = {}
        ready = threading.Event()
        process, lines, lock = self.process, self.lines, self.lock

        def drain():
            # Keep reading to EOF so the pipe never fills; remember every line.
            for raw in process.stderr:
                line = raw.rstrip("\n")
                with lock:
                    lines.append(line)
                if not ready.is_set():
                    try:
                        event = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(event, dict) and event.get("event") == "listening":
                        listening.update(event)
                        ready.set()
            ready.set()  # EOF: wake the waiter

        self.reader = threading.Thread(target=drain, name="trifactord-stderr", daemon=True)
        self.reader.start()

        if not ready.wait(START_TIMEOUT) or "port" not in listening:
            self.stop()
            with lock:
                log = "\n".join(lines)
            shutil.rmtree(tmp, ignore_errors=True)
            pytest.fail(f"trifactord serve did not report listening (exit {process.returncode}); "
                        f"stderr:\n{log}", pytrace=False)
        self.port = int(listening["port"])

    def stop(self):
        """SIGTERM, then the exit code (None: killed after STOP_TIMEOUT)."""
        process = self.process
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return None

    def close(self, srv: "Server", tmp: Path):
        """Stop, clean up `tmp`, and assert a clean exit."""
        code = self.stop()
        self.reader.join(timeout=5)
        shutil.rmtree(tmp, ignore_errors=True)
        assert code == 0, (
            f"trifactord exited {code} after SIGTERM (None: killed after {STOP_TIMEOUT}s); "
            f"stderr tail:\n{srv.log_tail(400 if code is not None and code < 0 else 60)}"
        )


@pytest.fixture(scope="session")
def server():
    binary = _binary()
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-sdk."))
    cert, key, db = tmp / "cert.pem", tmp / "key.pem", tmp / "t.db"
    # Dev mode creates the key that seals TOTP secrets when it is missing: keep it in tmp.
    key_file = tmp / "trifactor.key"
    database_url = f"sqlite:{db}"

    _run([
        "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
        "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1",
        "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
    ])

    out = _run([binary, "keys", "create", "--name", "sdk-tests", "--json",
                "--database-url", database_url])
    try:
        created = json.loads(out)
        api_key, api_secret = created["api_key"], created["api_secret"]
    except (ValueError, KeyError) as e:
        pytest.fail(f"`keys create --json` printed {out!r}: {e}", pytrace=False)

    daemon = _Daemon(binary, [
        "--listen", "127.0.0.1:0", "--database-url", database_url,
        "--dev", "--tls-cert", str(cert), "--tls-key", str(key), "--key-file", str(key_file),
    ], tmp)
    srv = Server(process=daemon.process, port=daemon.port, api_key=api_key,
                 api_secret=api_secret, cert=str(cert), lines=daemon.lines, lock=daemon.lock)
    old_bundle = os.environ.get("REQUESTS_CA_BUNDLE")
    os.environ["REQUESTS_CA_BUNDLE"] = str(cert)
    _current_servers.append(srv)
    try:
        yield srv
    finally:
        _current_servers.remove(srv)
        if old_bundle is None:
            os.environ.pop("REQUESTS_CA_BUNDLE", None)
        else:
            os.environ["REQUESTS_CA_BUNDLE"] = old_bundle
        daemon.close(srv, tmp)


@pytest.fixture(scope="session")
def http_server():
    """trifactord serve --dev without TLS, for WebAuthn: `http://localhost:PORT` is a secure
    context, the relying-party id defaults to `localhost`, and dev mode allows the origin
    `http://localhost:<port>`. No API key: the passkey tests use the user-facing API only."""
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-http."))
    with plain_http_server(tmp, [
        "--dev", "--listen", "127.0.0.1:0", "--database-url", f"sqlite:{tmp / 't.db'}",
        "--key-file", str(tmp / "k.key"),
    ]) as srv:
        yield srv


@contextlib.contextmanager
def plain_http_server(tmp: Path, args: list, api_key: str = "", api_secret: str = ""):
    """`trifactord serve ARGS` over plain HTTP: its stderr shown with a failing test's report;
    stopped, `tmp` removed and a clean exit asserted afterwards."""
    daemon = _Daemon(_binary(), args, tmp)
    srv = Server(process=daemon.process, port=daemon.port, api_key=api_key, api_secret=api_secret, cert=None,
                 lines=daemon.lines, lock=daemon.lock, scheme="http")
    _current_servers.append(srv)
    try:
        yield srv
    finally:
        _current_servers.remove(srv)
        daemon.close(srv, tmp)


@pytest.fixture
def client(server) -> Vonage:
    """A fresh SDK client per test, with the session's API key."""
    return server.client()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        for srv in list(_current_servers):
            report.sections.append((f"trifactord {srv.base_url} stderr (tail)", srv.log_tail()))


CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, headless, driven by Playwright (never a downloaded browser)."""
    from playwright.sync_api import sync_playwright

    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(f"no Chromium at {CHROMIUM}: install Debian's `chromium` (or set CHROMIUM)",
                    pytrace=False)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"], headless=True)
        try:
            yield b
        finally:
            b.close()


