"""Apache httpd with mod_auth_openidc as a relying party of Trifactor's OpenID Provider, end to end.

Debian's `apache2` and `libapache2-mod-auth-openidc` (2.4.x) run as a foreground process tree on a
loopback port with the configuration in Tests/python-clients/apache/ (trifactor-oidc.conf is the
relying-party part the docs quote). trifactord serves plain HTTP with the issuer on
`http://localhost:PORT` (a secure context, so WebAuthn works, and the relying-party id is
`localhost`). Playwright drives Debian's Chromium through the hosted sign-in; a CDP virtual
authenticator (user verification, resident keys) holds the passkey.

Each test has its own user and browser, so each can fail alone:
- a TOTP user signs in to /protected/ (email, password, authenticator-app code, consent) and Apache
  shows the claims it received: acr urn:trifactor:acr:mfa, amr pwd and otp;
- a user with a passkey too, signed in that way, opens /strong/ (which requires
  acr urn:trifactor:acr:hwk) and the provider asks for the passkey alone (step-up);
- mod_auth_openidc's logout URL ends Apache's session and, through the provider's
  end_session_endpoint (RP-Initiated Logout 1.0), the provider's single sign-on session.
"""

import contextlib
import json
import os
import pwd
import re
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import quote

import pyotp
import pytest

from conftest import _binary, _run, free_port, plain_http_server

APACHE = "/usr/sbin/apache2"
MODULE = "/usr/lib/apache2/modules/mod_auth_openidc.so"
CONF_DIR = Path(__file__).parent / "apache"
PASSWORD = "correct horse battery staple 42"
WAIT_MS = 15_000
ACR_MFA = "urn:trifactor:acr:mfa"
ACR_HWK = "urn:trifactor:acr:hwk"


class Apache:
    """`apache2 -f httpd.conf -DFOREGROUND` from a copy of Tests/python-clients/apache in a temp dir."""

    def __init__(self, port: int, env: dict):
        self.port = port
        self.url = f"http://localhost:{port}"
        self.dir = Path(tempfile.mkdtemp(prefix="trifactor-apache."))
        conf = self.dir / "conf"
        shutil.copytree(CONF_DIR, conf)
        run = self.dir / "run"
        run.mkdir()
        self.env = {
            "PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C",
            "APACHE_TEST_DIR": str(run), "APACHE_CONF_DIR": str(conf),
            "APACHE_PORT": str(port), "APACHE_URL": self.url, **env,
        }
        self.error_log, self.access_log = run / "error.log", run / "access.log"
        self.config = conf / "httpd.conf"
        # Never as root: as root, the whole tree runs as Debian's www-data instead.
        kw = {}
        if os.geteuid() == 0:
            user = pwd.getpwnam("www-data")
            os.chmod(self.dir, 0o755)
            for path in [self.dir, *self.dir.rglob("*")]:
                os.chown(path, user.pw_uid, user.pw_gid)
            kw = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}
        checked = subprocess.run([APACHE, "-t", "-f", str(self.config)], env=self.env,
                                 capture_output=True, text=True, timeout=30, **kw)
        if checked.returncode != 0:
            self.cleanup()
            pytest.fail(f"apache2 -t rejected {self.config}:\n{checked.stdout}{checked.stderr}",
                        pytrace=False)
        self.process = subprocess.Popen(
            [APACHE, "-f", str(self.config), "-DFOREGROUND"], env=self.env,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True, **kw)
        deadline = time.monotonic() + 15
        while True:
            if self.process.poll() is not None:
                log = self.log_tail()
                self.cleanup()
                pytest.fail(f"apache2 exited {self.process.returncode}; error.log:\n{log}",
                            pytrace=False)
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
                break
            if time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"apache2 did not listen on {port}; error.log:\n{self.log_tail()}",
                            pytrace=False)
            time.sleep(0.05)

    def log_tail(self, n: int = 40) -> str:
        parts = []
        for path in (self.error_log, self.access_log):
            with contextlib.suppress(OSError):
                parts.append(f"--- {path.name}\n" + "\n".join(path.read_text(errors="replace")
                                                              .splitlines()[-n:]))
        return "\n".join(parts)

    def stop(self):
        if self.process.poll() is None:
            # SIGTERM to the parent stops its children too (a graceless stop, fine for a test).
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def stack():
    """trifactord as an OpenID Provider on http://localhost:TFPORT, Apache registered as client
    `apache`, and Apache on http://localhost:APORT."""
    for path in (APACHE, MODULE):
        if not os.path.exists(path):
            pytest.fail(f"no {path}: install Debian's apache2 and libapache2-mod-auth-openidc "
                        "(scripts/install-deps.sh test)", pytrace=False)
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-oidc-apache."))
    tf_port, a_port = free_port(), free_port()
    while a_port == tf_port:
        a_port = free_port()
    db, key = f"sqlite:{tmp / 't.db'}", str(tmp / "k.key")
    issuer = f"http://localhost:{tf_port}"
    with plain_http_server(tmp, [
        "--dev", "--listen", f"127.0.0.1:{tf_port}", "--public-url", issuer, "--oidc", "1",
        "--database-url", db, "--key-file", key, "--webauthn-rp-id", "localhost",
    ]) as provider:
        apache_url = f"http://localhost:{a_port}"
        client = json.loads(_run([
            _binary(), "clients", "create", "--name", "Intranet", "--id", "apache",
            "--redirect-uris", f"{apache_url}/protected/redirect_uri",
            "--post-logout-uris", f"{apache_url}/loggedout",
            "--json", "--database-url", db, "--key-file", key,
        ]))
        apache = Apache(a_port, {
            "TRIFACTOR_URL": issuer,
            "OIDC_CLIENT_SECRET": client["client_secret"],
            "OIDC_CRYPTO_PASSPHRASE": secrets.token_urlsafe(32),
        })
        try:
            yield provider, apache
        finally:
            apache.stop()
            apache.cleanup()


@pytest.fixture
def browser_page(browser, stack):
    """A fresh browser (cookies of neither server) with a virtual authenticator."""
    provider, apache = stack
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    console = []
    page.on("console", lambda m: console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    authenticator = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True,
        "hasUserVerification": True, "isUserVerified": True,
        "automaticPresenceSimulation": True,
    }})["authenticatorId"]
    page.cdp, page.authenticator, page.console_messages = cdp, authenticator, console
    try:
        yield page
    finally:
        context.close()


@contextlib.contextmanager
def explained(page, stack):
    """On a failure: where the browser is, what it shows, and Apache's logs."""
    try:
        yield
    except Exception as e:
        _, apache = stack
        try:
            shown = page.inner_text("body")[:1500]
        except Exception as inner:  # the page may be mid-navigation
            shown = f"(unreadable: {inner})"
        raise AssertionError(
            f"{e}\n\nbrowser at {page.url}\npage text:\n{shown}\n"
            f"console: {page.console_messages[-10:]}\n\napache:\n{apache.log_tail()}"
        ) from e


# --- the user --------------------------------------------------------------------------------------

def make_user(provider, label: str, passkey_page=None):
    """A verified account with an authenticator app (TOTP, codes made by pyotp) and, given a page,
    a passkey first (in that page's virtual authenticator): (email, totp, user id)."""
    email = f"{label}-{uuid.uuid4().hex[:10]}@example.com"
    provider.create_account(email, PASSWORD, "Intranet User")
    token = provider.expect(201, "POST", "/v1/sessions",
                            {"email": email, "password": PASSWORD})["token"]
    if passkey_page is not None:
        # A first factor needs no second; the next one is enrolled from the passkey's session.
        token = enroll_passkey(passkey_page, provider, token)
    started = provider.expect(202, "POST", "/v1/mfa/enrollments", {"kind": "totp"}, token=token)
    totp = pyotp.parse_uri(started["otpauth_uri"])
    provider.expect(201, "POST", f"/v1/mfa/enrollments/{started['enrollment_session']}",
                    {"code": totp.now(), "display_name": "Phone app"}, token=token)
    me = provider.expect(200, "GET", "/v1/session", token=token)
    user_id = (me.get("user") or {}).get("id") or me.get("user_id") or me["session"].get("user_id")
    assert user_id, me
    return email, totp, user_id


def enroll_passkey(page, provider, token: str) -> str:
    """Registers a passkey in the virtual authenticator from the provider's dev page, then signs in
    with it alone: that session's token (AAL2)."""
    page.goto(f"{provider.base_url}/dev/passkey")
    page.wait_for_function("() => window.trifactor !== undefined")
    result = page.evaluate("([t]) => window.trifactor.register(t, 'Laptop')", [token])
    assert isinstance(result, dict) and result.get("status") == 201, \
        f"passkey registration -> {result}; console: {page.console_messages}"
    creds = page.cdp.send("WebAuthn.getCredentials",
                          {"authenticatorId": page.authenticator})["credentials"]
    assert len(creds) == 1 and creds[0]["rpId"] == "localhost", creds
    alone = page.evaluate("() => window.trifactor.passwordless()")
    assert isinstance(alone, dict) and alone.get("status") == 201, f"passkey sign-in -> {alone}"
    return alone["json"]["token"]


# --- the browser's steps -------------------------------------------------------------------------

def provider_page(page, provider, path_prefix: str):
    page.wait_for_url(re.compile(re.escape(f"{provider.base_url}{path_prefix}")))


def sign_in_with_totp(page, provider, apache, email, totp, start: str):
    """From `start` on Apache to the provider's pages and back, with the authenticator app's code."""
    page.goto(f"{apache.url}{start}")
    provider_page(page, provider, "/authorize/sign-in")
    page.get_by_label("Email", exact=True).fill(email)
    page.get_by_role("button", name="Continue", exact=True).click()
    provider_page(page, provider, "/authorize/password")
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_role("button", name="Sign in", exact=True).click()
    provider_page(page, provider, "/authorize/second-factor")
    code_field = page.get_by_label("Code from your authenticator app", exact=True)
    if not code_field.is_visible():
        # Another factor was offered first: "Use another way" -> the authenticator app.
        page.get_by_role("link", name=re.compile(r"^Authenticator app")).click()
    # The enrollment spent the current step's code (replay protection); one step either side of
    # now is accepted, so the next step's code is what the app shows a moment later.
    code_field.fill(totp.at(time.time() + 30))
    page.get_by_role("button", name="Sign in", exact=True).click()
    provider_page(page, provider, "/authorize/consent")
    assert "Intranet" in page.inner_text("body")
    page.get_by_role("button", name="Allow", exact=True).click()
    page.wait_for_url(f"{apache.url}{start}")


def presence(page, on: bool):
    """Whether the virtual authenticator answers by itself (a person touching it)."""
    page.cdp.send("WebAuthn.setAutomaticPresenceSimulation",
                  {"authenticatorId": page.authenticator, "enabled": on})


def claims(page) -> dict:
    """The NAME=VALUE lines claims.cgi printed."""
    text = page.inner_text("body")
    found = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    assert "OIDC_CLAIM_sub" in found, f"no claims on the page:\n{text}"
    return found


def amr(found: dict) -> set:
    return set(found.get("OIDC_CLAIM_amr", "").split(","))


# --- the tests -----------------------------------------------------------------------------------

def test_apache_protected_page_signs_in_with_password_and_authenticator_app_and_shows_the_mfa_claims(
        stack, browser_page):
    provider, apache = stack
    page = browser_page
    email, totp, user_id = make_user(provider, "apache-mfa")
    with explained(page, stack):
        sign_in_with_totp(page, provider, apache, email, totp, "/protected/")
        found = claims(page)
        assert found["OIDC_CLAIM_sub"] == user_id, found
        assert found.get("REMOTE_USER") == user_id, found
        assert found.get("OIDC_CLAIM_email") == email, found
        assert found.get("OIDC_CLAIM_iss") == provider.base_url, found
        assert found.get("OIDC_CLAIM_acr") == ACR_MFA, found
        assert {"pwd", "otp"} <= amr(found), found


def test_apache_hardware_key_location_steps_up_with_the_passkey_on_the_hosted_page(
        stack, browser_page):
    provider, apache = stack
    page = browser_page
    with explained(page, stack):
        email, totp, user_id = make_user(provider, "apache-hwk", passkey_page=page)
        # The email page offers the passkey through autofill (conditional mediation), which the
        # virtual authenticator would answer at once: like a person who types their email instead,
        # it answers nothing until the passkey is asked for.
        presence(page, False)
        sign_in_with_totp(page, provider, apache, email, totp, "/protected/")
        assert claims(page).get("OIDC_CLAIM_acr") == ACR_MFA
        presence(page, True)

        # /strong/ requires the hardware-bound level: mod_auth_openidc sends the browser back with
        # acr_values=urn:trifactor:acr:hwk, and the provider asks for the passkey (no password).
        page.goto(f"{apache.url}/strong/")
        provider_page(page, provider, "/authorize/second-factor")
        assert page.get_by_label("Password", exact=True).count() == 0
        page.get_by_role("button", name="Use my passkey", exact=True).click()
        page.wait_for_url(f"{apache.url}/strong/")
        found = claims(page)
        assert found["OIDC_CLAIM_sub"] == user_id, found
        assert found.get("OIDC_CLAIM_acr") == ACR_HWK, found
        assert "hwk" in amr(found), found

        # The stronger session serves the ordinary location too, without another trip.
        page.goto(f"{apache.url}/protected/")
        assert page.url == f"{apache.url}/protected/"
        assert claims(page).get("OIDC_CLAIM_acr") == ACR_HWK


def test_apache_logout_ends_apache_session_and_provider_single_sign_on(stack, browser_page):
    provider, apache = stack
    page = browser_page
    email, totp, _ = make_user(provider, "apache-logout")
    with explained(page, stack):
        sign_in_with_totp(page, provider, apache, email, totp, "/protected/")
        claims(page)
        sso = [c["value"] for c in page.context.cookies(provider.base_url) if c["name"] == "tf_session"]
        assert len(sso) == 1, page.context.cookies()
        provider.expect(200, "GET", "/v1/session", token=sso[0])

        # mod_auth_openidc's logout: its session goes, then the provider's end_session_endpoint
        # (id_token_hint, post_logout_redirect_uri) ends the single sign-on and returns.
        page.goto(f"{apache.url}/protected/redirect_uri?logout="
                  + quote(f"{apache.url}/loggedout", safe=""))
        page.wait_for_url(re.compile(re.escape(f"{apache.url}/loggedout")))
        assert "Signed out" in page.inner_text("body")
        r = provider.call("GET", "/v1/session", token=sso[0])
        assert r.status_code == 401, f"the provider's session survived the logout: {r.status_code} {r.text}"

        # Apache asks to sign in again, and the provider asks who it is (no silent return).
        page.goto(f"{apache.url}/protected/")
        provider_page(page, provider, "/authorize/sign-in")
        page.get_by_label("Email", exact=True).wait_for()
        assert page.url.startswith(provider.base_url), page.url
