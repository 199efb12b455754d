"""Harness for the OpenID Provider tests (test_oidc_*.py): a trifactord with the provider on,
relying parties registered with `trifactord clients create`, users with a password and an
authenticator app (pyotp), a cookie-keeping browser that walks the hosted sign-in pages by
reading their HTML forms, and token checks made with authlib's JOSE (the JWK Set from /jwks).

Import the `op` fixture into a test module (`from oidc_support import op`): one server per module.
"""

import base64
import contextlib
import hashlib
import json
import secrets
import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import pyotp
import pytest
import requests
from authlib.jose import JsonWebKey, JsonWebToken
from authlib.oauth2.rfc9068.claims import JWTAccessTokenClaims
from authlib.oidc.core import CodeIDToken

from conftest import Server, _binary, _current_servers, _Daemon, _run, free_port

PASSWORD = "correct horse battery staple 42"
TIMEOUT = 10
ACR_PASSWORD = "urn:trifactor:acr:password"
ACR_MFA = "urn:trifactor:acr:mfa"
# Where relying parties listen (nothing does: the tests read the redirect's Location).
CALLBACK = "http://127.0.0.1:8700/callback"

_jwt = JsonWebToken(["ES256", "RS256"])


# ----------------------------------------------------------------------------- the server

@dataclass
class Client:
    """A registered relying party, as `clients create --json` printed it."""

    id: str
    secret: "str | None"
    redirect_uri: str
    auth_method: str
    registered: dict


@dataclass
class User:
    """An account with a verified email, and (unless made without) an authenticator app."""

    email: str
    password: str = PASSWORD
    totp: "pyotp.TOTP | None" = None
    last_step: int = -1  # the newest TOTP step the server has seen (replays of it or older fail)

    def next_code(self) -> str:
        """A TOTP code the server accepts now: a step newer than any used, within now±1 step."""
        assert self.totp is not None, f"{self.email} has no authenticator app"
        while True:
            now = time.time()
            current = int(now // 30)
            # Step now-1 only early in a step, so the server (a little later) still takes it.
            candidates = ([current - 1] if now % 30 < 20 else []) + [current, current + 1]
            for step in candidates:
                if step > self.last_step:
                    self.last_step = step
                    return self.totp.at(step * 30)
            time.sleep(30 - now % 30 + 0.05)


class Provider:
    """A running `trifactord serve --oidc 1` on 127.0.0.1 whose public URL is where it listens."""

    def __init__(self, tmp: Path, extra_args=(), db_url=None):
        self.binary = _binary()
        self.tmp = tmp
        self.db_url = db_url or f"sqlite:{tmp / 't.db'}"
        self.key_file = str(tmp / "key")
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.daemon = self._start(self.port, self.issuer, list(extra_args))
        self.srv = Server(process=self.daemon.process, port=self.daemon.port, api_key="", api_secret="",
                          cert=None, lines=self.daemon.lines, lock=self.daemon.lock, scheme="http")
        self._metadata = None

    # The settings every instance shares: fast password hashing, no sign-in rate limits in the way.
    def common_args(self):
        return ["--dev", "1", "--database-url", self.db_url, "--key-file", self.key_file, "--oidc", "1",
                "--argon2-opslimit", "1", "--argon2-memory-kib", "8192",
                "--signin-ip-burst", "1000", "--signin-ip-rate", "100",
                "--signup-ip-burst", "1000", "--signup-ip-rate", "100"]

    def _start(self, port, public_url, extra):
        return _Daemon(self.binary, ["--listen", f"127.0.0.1:{port}", "--public-url", public_url,
                                     *self.common_args(), *extra], self.tmp)

    @contextlib.contextmanager
    def instance(self, *extra):
        """Another process on the same database and issuer (its own port): it reads the signing keys at
        once, and `--clock-offset N` moves its clock. Yields its base URL."""
        port = free_port()
        daemon = self._start(port, self.issuer, list(extra))
        other = Server(process=daemon.process, port=port, api_key="", api_secret="", cert=None,
                       lines=daemon.lines, lock=daemon.lock, scheme="http")
        _current_servers.append(other)
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            _current_servers.remove(other)
            code = daemon.stop()
            daemon.reader.join(timeout=5)
            assert code == 0, f"second instance exited {code}:\n{other.log_tail()}"

    def cli(self, *args) -> str:
        return _run([self.binary, *args, "--database-url", self.db_url, "--key-file", self.key_file])

    # --- relying parties

    def register(self, *, auth_method="client_secret_basic", redirect_uris=(CALLBACK,), grants=None, scopes=None,
                 first_party=False, jwks=None, id_token_alg=None, name=None, prefix="rp", fapi2=False,
                 extra=()) -> Client:
        client_id = f"{prefix}-{uuid.uuid4().hex[:10]}"
        args = ["clients", "create", "--name", name or f"Test app {client_id}", "--id", client_id,
                "--redirect-uris", " ".join(redirect_uris), "--auth-method", auth_method, "--json"]
        if grants:
            args += ["--grants", grants]
        if scopes:
            args += ["--scopes", scopes]
        if first_party:
            args.append("--first-party")
        if fapi2:
            args.append("--fapi2")
        if id_token_alg:
            args += ["--id-token-alg", id_token_alg]
        args += list(extra)
        if jwks is not None:
            path = self.tmp / f"{client_id}.jwks.json"
            path.write_text(json.dumps(jwks))
            args += ["--jwks-file", str(path)]
        created = json.loads(self.cli(*args))
        assert created["client_id"] == client_id, created
        return Client(id=client_id, secret=created.get("client_secret"), redirect_uri=redirect_uris[0],
                      auth_method=auth_method, registered=created)

    # --- users

    def user(self, totp=True, sitekey=None) -> User:
        """A new account (email verified through the dev outbox), enrolled in TOTP unless `totp=False`, with the
        sitekey `(picture, phrase)` when given."""
        email = f"oidc-{uuid.uuid4().hex[:12]}@example.com"
        self.srv.create_account(email, PASSWORD, "OIDC Tester")
        user = User(email=email)
        if sitekey is not None:
            token = self.srv.sign_in(email, PASSWORD)
            self.srv.expect(200, "PUT", "/v1/account/sitekey", {"picture": sitekey[0], "phrase": sitekey[1]},
                            token=token)
            self.srv.expect(204, "DELETE", "/v1/session", token=token)
        if not totp:
            return user
        token = self.srv.sign_in(email, PASSWORD)
        started = self.srv.expect(202, "POST", "/v1/mfa/enrollments", {"kind": "totp"}, token=token)
        user.totp = pyotp.TOTP(started["secret"])
        now = time.time()
        step = int(now // 30) - (1 if now % 30 < 20 else 0)  # leave the next steps for sign-ins
        user.last_step = step
        self.srv.expect(201, "POST", f"/v1/mfa/enrollments/{started['enrollment_session']}",
                        {"code": user.totp.at(step * 30), "display_name": "Phone app"}, token=token)
        self.srv.expect(204, "DELETE", "/v1/session", token=token)
        return user

    # --- endpoints

    @property
    def metadata(self) -> dict:
        if self._metadata is None:
            r = requests.get(self.issuer + "/.well-known/openid-configuration", timeout=TIMEOUT)
            assert r.status_code == 200, r.text
            self._metadata = r.json()
        return self._metadata

    def url(self, name: str) -> str:
        return self.metadata[name]

    def jwks(self, base=None) -> dict:
        r = requests.get((base or self.issuer) + "/jwks", timeout=TIMEOUT)
        assert r.status_code == 200, r.text
        return r.json()

    def authorize_url(self, client: Client, base=None, **params) -> str:
        """/authorize?… with client_id, redirect_uri and response_type=code unless given (None drops one)."""
        query = {"client_id": client.id, "redirect_uri": client.redirect_uri, "response_type": "code",
                 "scope": "openid"}
        query.update(params)
        return (base or self.issuer) + "/authorize?" + urlencode({k: v for k, v in query.items() if v is not None})

    def token(self, client: Client, data: dict, how=None, base=None) -> requests.Response:
        """POST /token as `client` authenticates (basic, post, none), or `how` says."""
        how = how or {"client_secret_basic": "basic", "client_secret_post": "post"}.get(client.auth_method, "none")
        return self.post(client, "/token", data, how, base)

    def post(self, client: Client, path: str, data: dict, how=None, base=None) -> requests.Response:
        how = how or {"client_secret_basic": "basic", "client_secret_post": "post"}.get(client.auth_method, "none")
        data = dict(data)
        auth = None
        if how == "basic":
            auth = (client.id, client.secret)
        elif how == "post":
            data.update(client_id=client.id, client_secret=client.secret)
        else:
            data.setdefault("client_id", client.id)
        return requests.post((base or self.issuer) + path, data=data, auth=auth, timeout=TIMEOUT)

    def userinfo(self, access_token: str, base=None) -> requests.Response:
        return requests.get((base or self.issuer) + "/userinfo",
                            headers={"Authorization": f"Bearer {access_token}"}, timeout=TIMEOUT)

    def close(self):
        code = self.daemon.stop()
        self.daemon.reader.join(timeout=5)
        assert code == 0, f"trifactord exited {code} after SIGTERM:\n{self.srv.log_tail()}"


@contextlib.contextmanager
def running_provider(*extra_args, db_url=None):
    """A provider for the length of a `with`, its temp dir removed after (extra flags: `--oidc-registration open`;
    `db_url`: another database than a new SQLite file)."""
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-oidc."))
    provider = Provider(tmp, extra_args=list(extra_args), db_url=db_url)
    _current_servers.append(provider.srv)
    try:
        yield provider
    finally:
        _current_servers.remove(provider.srv)
        try:
            provider.close()
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def op():
    with running_provider() as provider:
        yield provider


# ----------------------------------------------------------------------------- keys

def ec_key():
    """A private P-256 key (authlib) whose JWK has 32-byte coordinates, as RFC 7518 §6.2.1.2 requires and the server
    insists on: JOSE libraries drop a coordinate's leading zero bytes now and then (about once in 64 keys)."""
    while True:
        key = JsonWebKey.generate_key("EC", "P-256", is_private=True)
        public = key.as_dict(is_private=False)
        if len(public["x"]) == 43 and len(public["y"]) == 43:
            return key


# ----------------------------------------------------------------------------- PKCE

def pkce_pair():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


# ----------------------------------------------------------------------------- the browser

class _Forms(HTMLParser):
    """The forms of a page: action, method, and the named inputs and buttons in each."""

    def __init__(self):
        super().__init__()
        self.forms, self._current, self.title, self._in_title = [], None, "", False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self._current = {"action": a.get("action", ""), "method": (a.get("method") or "get").lower(),
                             "inputs": {}, "buttons": []}
            self.forms.append(self._current)
        elif tag == "input" and self._current is not None and a.get("name"):
            self._current["inputs"][a["name"]] = a.get("value") or ""
        elif tag == "button" and self._current is not None and a.get("name"):
            self._current["buttons"].append((a["name"], a.get("value") or ""))
        elif tag == "title":
            self._in_title = True

    def handle_endtag(self, tag):
        if tag == "form":
            self._current = None
        elif tag == "title":
            self._in_title = False

    def handle_data(self, data):
        if self._in_title:
            self.title += data


def forms_of(html: str):
    parser = _Forms()
    parser.feed(html)
    return parser


@dataclass
class Outcome:
    """Where a walk through the hosted pages ended: a redirect to the client, an auto-posting form, or a page."""

    kind: str  # "redirect" | "form_post" | "page"
    steps: list  # the hosted forms submitted on the way: "sign-in", "password", "second-factor", "consent", …
    location: str = ""
    params: dict = field(default_factory=dict)
    response: "requests.Response | None" = None

    @property
    def code(self):
        return self.params.get("code")

    def describe(self):
        r = self.response
        body = r.text[:600] if r is not None else ""
        return f"{self.kind} steps={self.steps} location={self.location} params={self.params} " \
               f"status={r.status_code if r is not None else ''} body={body}"


def single_values(query: str) -> dict:
    parsed = parse_qs(query, keep_blank_values=True)
    repeated = [k for k, v in parsed.items() if len(v) > 1]
    assert not repeated, f"repeated parameters {repeated} in {query}"
    return {k: v[0] for k, v in parsed.items()}


class Browser:
    """A user agent with a cookie jar: follows the provider's 303s, fills the hosted forms it finds, and stops at
    the first answer that leaves the provider (the redirect to the client) or a page it cannot go on from."""

    def __init__(self, op: Provider, base=None):
        self.op = op
        self.base = base or op.issuer  # the instance this browser talks to
        self.http = requests.Session()

    def cookie(self, name):
        return self.http.cookies.get(name)

    def authorize(self, url: str, user: "User | None" = None, consent="allow", method="GET", data=None,
                  max_steps=12) -> Outcome:
        if method == "POST":
            r = self.http.post(url, data=data, allow_redirects=False, timeout=TIMEOUT)
        else:
            r = self.http.get(url, allow_redirects=False, timeout=TIMEOUT)
        return self.follow(r, user, consent, max_steps)

    def follow(self, r, user=None, consent="allow", max_steps=12) -> Outcome:
        issuer = self.base
        steps = []
        for _ in range(max_steps * 2):
            if r.status_code in (301, 302, 303, 307):
                location = urljoin(r.url, r.headers["Location"])
                if location.startswith(issuer + "/authorize"):
                    r = self.http.get(location, allow_redirects=False, timeout=TIMEOUT)
                    continue
                return Outcome("redirect", steps, location, single_values(urlsplit(location).query), r)
            parsed = forms_of(r.text) if "html" in r.headers.get("Content-Type", "") else None
            forms = [f for f in (parsed.forms if parsed else []) if not f["action"].endswith("/authorize/cancel")]
            if r.status_code != 200 or not forms:
                return Outcome("page", steps, r.url, {}, r)
            form = forms[0]
            action = urljoin(r.url, form["action"])
            if not action.startswith(issuer + "/authorize"):
                # response_mode=form_post: the page posts the answer to the client.
                return Outcome("form_post", steps, action, dict(form["inputs"]), r)
            step = urlsplit(action).path.removeprefix("/authorize/")
            fields = dict(form["inputs"])
            if user is None and step in ("sign-in", "password", "second-factor"):
                return Outcome("page", steps, r.url, {}, r)
            if step == "sign-in":
                fields["email"] = user.email
            elif step == "password":
                fields["password"] = user.password
            elif step == "second-factor":
                fields["code"] = user.next_code()
            elif step == "consent":
                fields["decision"] = consent
            elif step == "account":
                fields["choice"] = "current"
            else:
                return Outcome("page", steps, r.url, {}, r)
            steps.append(step)
            r = self.http.post(action, data=fields, allow_redirects=False, timeout=TIMEOUT)
        raise AssertionError(f"the hosted sign-in did not end after {max_steps} steps: {steps}, at {r.url}")


# ----------------------------------------------------------------------------- token checks

def key_set(op: Provider, base=None):
    return JsonWebKey.import_key_set(op.jwks(base))


def verify_id_token(op: Provider, token: str, client_id: str, nonce=None, max_age=None, jwks=None):
    """The ID token's claims once authlib (as a relying party would) checked signature, iss, aud, exp, iat, nonce."""
    params = {"client_id": client_id}
    if nonce is not None:
        params["nonce"] = nonce
    if max_age is not None:
        params["max_age"] = max_age
    claims = _jwt.decode(
        token, jwks or key_set(op), claims_cls=CodeIDToken,
        claims_options={"iss": {"essential": True, "value": op.issuer},
                        "aud": {"essential": True, "value": client_id},
                        "exp": {"essential": True}, "iat": {"essential": True}},
        claims_params=params)
    claims.validate(leeway=5)
    return claims


def verify_access_token(op: Provider, token: str, audience=None, jwks=None):
    """An RFC 9068 access token's claims, checked against the JWK Set (typ at+jwt, iss, aud, exp)."""
    claims = _jwt.decode(
        token, jwks or key_set(op), claims_cls=JWTAccessTokenClaims,
        claims_options={"iss": {"essential": True, "value": op.issuer},
                        "aud": {"essential": True, "value": audience or op.issuer},
                        "exp": {"essential": True}, "sub": {"essential": True},
                        "client_id": {"essential": True}, "jti": {"essential": True},
                        "iat": {"essential": True}})
    claims.validate(leeway=5)
    assert claims.header.get("typ", "").lower() in ("at+jwt", "application/at+jwt"), claims.header
    return claims


def header_of(token: str) -> dict:
    part = token.split(".")[0]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def sign_in_for_code(op: Provider, browser: Browser, client: Client, user: User, **params) -> Outcome:
    """A full code flow for a confidential client: the redirect's outcome, asserting a code came back."""
    state = params.pop("state", secrets.token_urlsafe(16))
    outcome = browser.authorize(op.authorize_url(client, base=browser.base, state=state, **params), user)
    assert outcome.kind == "redirect" and outcome.code, outcome.describe()
    assert outcome.params.get("state") == state, outcome.describe()
    assert outcome.params.get("iss") == op.issuer, outcome.describe()
    return outcome


def redeem(op: Provider, client: Client, code: str, base=None, **extra) -> requests.Response:
    return op.token(client, {"grant_type": "authorization_code", "code": code,
                             "redirect_uri": client.redirect_uri, **extra}, base=base)


def refresh(op: Provider, client: Client, refresh_token: str, base=None) -> requests.Response:
    return op.token(client, {"grant_type": "refresh_token", "refresh_token": refresh_token}, base=base)


def tokens_for(op: Provider, client: Client, user: User, scope="openid", base=None, **params) -> dict:
    """Sign `user` in through the hosted pages and redeem the code: the token response."""
    outcome = sign_in_for_code(op, Browser(op, base), client, user, scope=scope, **params)
    r = redeem(op, client, outcome.code, base=base)
    assert r.status_code == 200, f"{r.status_code} {r.text}"
    return r.json()


def oauth_error(r: requests.Response, status: int, error: str):
    """Assert an RFC 6749 §5.2 error answer."""
    assert r.status_code == status, f"expected {status} {error}, got {r.status_code} {r.text}"
    body = r.json()
    assert body.get("error") == error, f"expected error={error}, got {body}"
    assert "access_token" not in body and "refresh_token" not in body and "id_token" not in body, body
    return body
