"""Trifactor as the authorization server of MCP servers, proved with the official MCP Python SDK.

Trifactor runs as an OpenID Provider with open dynamic client registration (RFC 7591). Two MCP
servers (the SDK's MCPServer over streamable HTTP, in this process) accept only Trifactor's
access tokens: one checks the RFC 9068 JWT against the JWKS, the other asks Trifactor's RFC 7662
introspection endpoint as an operator-registered client. Both serve RFC 9728 protected resource
metadata naming Trifactor and require the scope `mcp`.

The SDK's own OAuth client (`OAuthClientProvider`) starts from nothing but the MCP server's URL:
the 401's WWW-Authenticate leads it to the resource metadata, then to Trifactor's RFC 8414
metadata; it registers itself, sends the person through the hosted sign-in (email, password,
authenticator-app code from pyotp, consent; Chromium through Playwright) with PKCE and the
RFC 8707 `resource`, exchanges the code and calls the tool, which must name the person and
report `acr` urn:trifactor:acr:mfa. A token is reused while valid, refreshed (rotated) when
expired, and a token minted for one MCP server is refused by the other.
"""

import functools
import threading
import json
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
import jwt
import pyotp
import pytest
import requests
from pydantic import AnyUrl

from conftest import CHROMIUM, _binary, _run, free_port, plain_http_server
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp_support.hosted_sign_in import BrowserThread, Person, SignInHandlers
from mcp_support.resource_server import IntrospectionVerifier, JwksVerifier, UvicornThread, build_app

PASSWORD = "correct horse battery staple 42"
ACR_MFA = "urn:trifactor:acr:mfa"


@dataclass
class Trifactor:
    issuer: str
    api: object  # conftest.Server, for the user-facing API and the dev outbox
    rs_client_id: str
    rs_client_secret: str


@pytest.fixture(scope="module")
def trifactor():
    port = free_port()
    issuer = f"http://127.0.0.1:{port}"
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-mcp."))
    settings = ["--database-url", f"sqlite:{tmp / 't.db'}", "--key-file", str(tmp / "trifactor.key")]
    with plain_http_server(tmp, [
        "--listen", f"127.0.0.1:{port}", "--public-url", issuer, "--oidc", "1",
        "--oidc-registration", "open", "--dev", *settings,
    ]) as srv:
        # The resource servers' own client, for introspection: registered by the operator.
        rs = json.loads(_run([_binary(), "clients", "create", "--name", "MCP resource servers",
                              "--id", "mcp-rs", "--auth-method", "client_secret_basic",
                              "--grants", "client_credentials", "--scopes", "mcp", "--json", *settings]))
        yield Trifactor(issuer, srv, rs["client_id"], rs["client_secret"])


@pytest.fixture(scope="module")
def person(trifactor) -> Person:
    """A verified account with an authenticator app enrolled through the API (as test_pyotp_totp does)."""
    api = trifactor.api
    email = f"mcp-{uuid.uuid4().hex[:10]}@example.com"
    api.create_account(email, PASSWORD, "Ada Lovelace")
    token = api.sign_in(email, PASSWORD)
    started = api.expect(202, "POST", "/v1/mfa/enrollments", {"kind": "totp"}, token=token)
    totp = pyotp.parse_uri(started["otpauth_uri"])
    now = time.time()
    api.expect(201, "POST", f"/v1/mfa/enrollments/{started['enrollment_session']}",
               {"code": totp.at(now), "display_name": "Phone app"}, token=token)
    me = api.expect(200, "GET", "/v1/session", token=token)
    p = Person(email=email, password=PASSWORD, totp=totp, spent_steps={int(now // totp.interval)})
    p.user_id = me["user"]["id"]
    return p


@pytest.fixture(scope="module")
def chromium():
    b = BrowserThread(CHROMIUM)
    try:
        yield b
    finally:
        b.close()


@dataclass
class McpServer:
    url: str  # the streamable HTTP endpoint, which is also the resource (RFC 8707 / RFC 9728)
    verifier: object


@pytest.fixture(scope="module")
def jwks_server(trifactor):
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    verifier = JwksVerifier(trifactor.issuer, f"{trifactor.issuer}/jwks", url)
    with UvicornThread(build_app("whoami-jwks", trifactor.issuer, url, verifier), port):
        yield McpServer(url, verifier)


@pytest.fixture(scope="module")
def introspection_server(trifactor):
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    verifier = IntrospectionVerifier(trifactor.issuer, f"{trifactor.issuer}/introspect", url,
                                     trifactor.rs_client_id, trifactor.rs_client_secret)
    with UvicornThread(build_app("whoami-introspection", trifactor.issuer, url, verifier), port):
        yield McpServer(url, verifier)


class MemoryStorage(TokenStorage):
    def __init__(self):
        self.tokens: "OAuthToken | None" = None
        self.client_info: "OAuthClientInformationFull | None" = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


@dataclass
class Agent:
    """One MCP client application: its stored registration and tokens, its sign-in handlers, and
    every HTTP exchange its OAuth provider made (method, URL, status)."""

    handlers: SignInHandlers
    storage: MemoryStorage = field(default_factory=MemoryStorage)
    transcript: list = field(default_factory=list)
    provider: "OAuthClientProvider | None" = None

    def shown(self) -> str:
        return "\n".join(f"  {m} {u} -> {s} {b}" for m, u, s, b in self.transcript)

    def exchanges(self, method, path) -> list:
        return [t for t in self.transcript if t[0] == method and urlparse(t[1]).path == path]


@pytest.fixture
def new_agent(chromium, person):
    """A factory of agents, their redirect listeners closed after the test."""
    made = []

    def make() -> Agent:
        made.append(Agent(SignInHandlers(chromium, person)))
        return made[-1]

    yield make
    for agent in made:
        agent.handlers.close()


async def call_whoami(agent: Agent, server_url: str, calls: int = 1, before=None) -> list:
    """Connect with a fresh OAuthClientProvider over `agent`'s storage and call whoami `calls` times
    (running `before[i](agent)` before call i when given); the tool's structured answers."""

    async def record(response):
        body = ""
        if response.status_code >= 400 or urlparse(str(response.request.url)).path in ("/register", "/token"):
            await response.aread()
            body = response.text[:600]
        agent.transcript.append((response.request.method, str(response.request.url), response.status_code, body))

    agent.provider = OAuthClientProvider(
        server_url=server_url,
        client_metadata=OAuthClientMetadata(
            client_name="Trifactor MCP test agent",
            redirect_uris=[AnyUrl(agent.handlers.redirect_uri)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
        ),
        storage=agent.storage,
        redirect_handler=agent.handlers.redirect_handler,
        callback_handler=agent.handlers.callback_handler,
    )
    answers = []
    async with httpx2.AsyncClient(auth=agent.provider, event_hooks={"response": [record]}, timeout=30) as http:
        async with streamable_http_client(server_url, http_client=http) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for i in range(calls):
                    if before and i in before:
                        before[i](agent)
                    result = await session.call_tool("whoami", {})
                    assert not result.is_error, f"whoami failed: {result}\nexchanges:\n{agent.shown()}"
                    answers.append(result.structured_content)
    return answers


def run(fn, *args, **kw):
    """Runs an async client on a thread of its own: Playwright's sync API (the session's shared browser)
    keeps an event loop marked running on the main thread, where anyio.run would refuse to start one."""
    outcome = {}

    def target():
        try:
            outcome["value"] = anyio.run(functools.partial(fn, *args, **kw))
        except BaseException as e:  # noqa: BLE001 - re-raised on the test's thread
            outcome["error"] = e

    worker = threading.Thread(target=target, name="mcp-client")
    worker.start()
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("value")


def claims_of(access_token: str) -> dict:
    return jwt.decode(access_token, options={"verify_signature": False})


def test_sdk_discovers_registers_signs_in_with_two_factors_and_calls_the_tool(
        trifactor, person, jwks_server, new_agent):
    agent = new_agent()
    marks = {}

    def expire(agent):
        # The access token's lifetime runs out (simulated in the provider, which then refreshes).
        marks["before_refresh"] = (len(agent.transcript), agent.storage.tokens)
        agent.provider.context.token_expiry_time = time.time() - 1

    try:
        answers = run(call_whoami, agent, jwks_server.url, calls=3,
                      before={1: lambda a: marks.setdefault("first", len(a.transcript)), 2: expire})
    except BaseException as e:
        raise AssertionError(f"{type(e).__name__}: {e}\nexchanges:\n{agent.shown()}\n"
                             f"refusals: {jwks_server.verifier.refusals}") from e

    # The tool names the person, signed in with two factors, through this client.
    client_id = agent.storage.client_info.client_id
    for answer in answers:
        assert answer["sub"] == person.user_id, answer
        assert answer["acr"] == ACR_MFA, answer
        assert answer["client_id"] == client_id, answer
        assert answer["aud"] == jwks_server.url, answer
        assert "mcp" in answer["scopes"], answer
        assert answer["verified_by"] == "jwks", answer

    # Discovery as MCP prescribes: the 401 names the resource metadata, which names Trifactor.
    first = agent.transcript[:marks["first"]]
    assert first[0][:3] == ("POST", jwks_server.url, 401), agent.shown()
    prm = f"{urlparse(jwks_server.url).scheme}://{urlparse(jwks_server.url).netloc}" \
          f"/.well-known/oauth-protected-resource/mcp"
    assert [x[2] for x in first if x[1] == prm] == [200], agent.shown()
    assert [x[2] for x in first if x[1] == f"{trifactor.issuer}/.well-known/oauth-authorization-server"] \
        == [200], agent.shown()
    # One registration, one sign-in, one code exchange; the second call reused the token.
    paths = [(m, urlparse(u).path, st) for m, u, st, _ in agent.transcript]
    assert [st for m, p, st in paths if p == "/register"] == [201], agent.shown()
    assert [st for m, p, st in paths[:marks["before_refresh"][0]] if p == "/token"] == [200], agent.shown()
    assert len(agent.handlers.authorization_urls) == 1, agent.handlers.authorization_urls

    # The authorization request the SDK built: PKCE S256, the resource, the scope from the metadata.
    q = {k: v[0] for k, v in parse_qs(urlparse(agent.handlers.authorization_urls[0]).query).items()}
    assert q["code_challenge_method"] == "S256" and q["code_challenge"], q
    assert q["resource"] == jwks_server.url, q
    assert q["scope"].split() == ["mcp", "offline_access"], q
    assert q["client_id"] == client_id, q
    # The hosted pages: email, password, authenticator app, consent.
    assert agent.handlers.pages[0] == ["/authorize/sign-in", "/authorize/password",
                                       "/authorize/second-factor", "/authorize/consent"], agent.handlers.pages
    # The redirect carried the RFC 9207 issuer, which the SDK checked against the metadata.
    assert parse_qs(urlparse(agent.handlers.redirects[0]).query)["iss"] == [trifactor.issuer]

    # Dynamic registration as the SDK asked: a confidential client (RFC 7591's default method).
    info = agent.storage.client_info
    assert info.token_endpoint_auth_method == "client_secret_basic" and info.client_secret, info
    assert [str(u) for u in info.redirect_uris] == [agent.handlers.redirect_uri], info

    # The refresh: one token request, no new sign-in; Trifactor rotated the refresh token and the
    # new access token is for the same resource, person and authentication level.
    at, old = marks["before_refresh"]
    assert [(p, st) for m, p, st in paths[at:] if p in ("/token", "/register", "/authorize")] == \
        [("/token", 200)], agent.shown()
    new = agent.storage.tokens
    assert new.access_token != old.access_token
    assert new.refresh_token and new.refresh_token != old.refresh_token, "refresh token not rotated"
    for tokens in (old, new):
        claims = claims_of(tokens.access_token)
        assert jwt.get_unverified_header(tokens.access_token)["typ"] == "at+jwt"
        assert claims["aud"] == jwks_server.url and claims["iss"] == trifactor.issuer, claims
        assert claims["sub"] == person.user_id and claims["client_id"] == client_id, claims
        assert claims["acr"] == ACR_MFA, claims

    # A new connection of the same application reuses the stored token: no sign-in, no token request.
    before = len(agent.transcript)
    again = run(call_whoami, agent, jwks_server.url)
    assert again[0]["sub"] == person.user_id, again
    later = agent.transcript[before:]
    assert [x[:3] for x in later if urlparse(x[1]).path != "/mcp" or x[2] >= 400] == [], agent.shown()
    assert len(agent.handlers.authorization_urls) == 1

    # The spent refresh token is refused (rotation with reuse detection, RFC 9700 §4.14.2).
    r = requests.post(f"{trifactor.issuer}/token", data={"grant_type": "refresh_token",
                                                           "refresh_token": old.refresh_token},
                      auth=(info.client_id, info.client_secret), timeout=10)
    assert r.status_code == 400 and r.json().get("error") == "invalid_grant", f"{r.status_code} {r.text}"


def raw_initialize(server_url: str, token: str) -> requests.Response:
    """An MCP initialize request with `token`, outside the SDK."""
    return requests.post(server_url, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18",
    }, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}},
        timeout=10)


def test_introspecting_server_and_tokens_bound_to_their_mcp_server(
        trifactor, person, jwks_server, introspection_server, new_agent):
    # Two agents, one per MCP server, each registering itself; the person's Trifactor session in
    # the browser may spare them the password and code, never the consent (offline_access).
    tokens = {}
    for server in (introspection_server, jwks_server):
        agent = new_agent()
        try:
            answer, = run(call_whoami, agent, server.url)
        except BaseException as e:
            raise AssertionError(f"{type(e).__name__}: {e}\nexchanges:\n{agent.shown()}\n"
                                 f"refusals: {server.verifier.refusals}") from e
        assert answer["sub"] == person.user_id and answer["acr"] == ACR_MFA, answer
        assert answer["aud"] == server.url, answer
        assert answer["verified_by"] == server.verifier.kind, answer
        assert agent.handlers.pages[-1][-1] == "/authorize/consent", agent.handlers.pages
        tokens[server.url] = agent.storage.tokens.access_token

    # Introspection told the resource server who and how, for its own token.
    mine = introspection_server.verifier.answers[-1]
    assert mine["active"] is True and mine["aud"] == introspection_server.url, mine
    assert mine["sub"] == person.user_id and mine["acr"] == ACR_MFA and mine["iss"] == trifactor.issuer, mine
    assert "mcp" in mine["scope"].split(), mine

    # Each MCP server accepts its own token outside the SDK too...
    for server in (jwks_server, introspection_server):
        r = raw_initialize(server.url, tokens[server.url])
        assert r.status_code == 200, f"{server.verifier.kind}: {r.status_code} {r.text}"

    # ...and refuses the other's: the audience is the other MCP server (RFC 8707, RFC 9068 §4).
    for server, other in ((jwks_server, introspection_server), (introspection_server, jwks_server)):
        refused_before = len(server.verifier.refusals)
        r = raw_initialize(server.url, tokens[other.url])
        assert r.status_code == 401, f"{server.verifier.kind} took a token for {other.url}: {r.status_code} {r.text}"
        challenge = r.headers.get("WWW-Authenticate", "")
        assert challenge.startswith("Bearer ") and 'error="invalid_token"' in challenge, challenge
        assert "resource_metadata=" in challenge, challenge
        why = server.verifier.refusals[refused_before:]
        assert why and ("aud" in why[-1].lower() or "audience" in why[-1].lower()), why


def test_tokens_stay_bound_to_the_resource_of_the_authorization(trifactor, person, jwks_server,
                                                                introspection_server, new_agent):
    """RFC 8707 §2.2: the code exchange and every refresh may only narrow to the resources of the
    authorization; another resource is invalid_target, never a token silently for the first one."""
    agent = new_agent()
    run(call_whoami, agent, jwks_server.url)
    info, tokens = agent.storage.client_info, agent.storage.tokens
    auth = (info.client_id, info.client_secret)
    token_endpoint = f"{trifactor.issuer}/token"

    r = requests.post(token_endpoint, data={"grant_type": "refresh_token", "refresh_token": tokens.refresh_token,
                                            "resource": jwks_server.url}, auth=auth, timeout=10)
    assert r.status_code == 200, f"{r.status_code} {r.text}"
    assert claims_of(r.json()["access_token"])["aud"] == jwks_server.url
    refresh_token = r.json().get("refresh_token", tokens.refresh_token)

    r = requests.post(token_endpoint, data={"grant_type": "refresh_token", "refresh_token": refresh_token,
                                            "resource": introspection_server.url}, auth=auth, timeout=10)
    shown = r.text
    if r.status_code == 200:
        shown += f"\naccess token claims: {claims_of(r.json()['access_token'])}"
    assert r.status_code == 400 and r.json().get("error") == "invalid_target", (
        f"refresh_token grant with resource={introspection_server.url}, outside the authorization's "
        f"resource {jwks_server.url} -> {r.status_code} {shown}")


def test_introspection_is_for_the_operators_resource_servers(trifactor, person, introspection_server, new_agent):
    """A client that registered itself (with open registration anyone can) is no resource server:
    RFC 7662 §2.1/§4, the server decides who may introspect, and self-registered agents learn
    nothing about other clients' tokens there."""
    agent = new_agent()
    run(call_whoami, agent, introspection_server.url)
    token = agent.storage.tokens.access_token

    r = requests.post(f"{trifactor.issuer}/introspect", data={"token": token},
                      auth=(trifactor.rs_client_id, trifactor.rs_client_secret), timeout=10)
    assert r.status_code == 200 and r.json()["active"] is True, f"{r.status_code} {r.text}"

    stranger = requests.post(f"{trifactor.issuer}/register", json={
        "client_name": "someone else", "redirect_uris": ["http://127.0.0.1:9/callback"],
        "grant_types": ["authorization_code"], "response_types": ["code"]}, timeout=10)
    assert stranger.status_code == 201, f"{stranger.status_code} {stranger.text}"
    stranger = stranger.json()
    r = requests.post(f"{trifactor.issuer}/introspect", data={"token": token},
                      auth=(stranger["client_id"], stranger["client_secret"]), timeout=10)
    assert r.status_code in (401, 403) or (r.status_code == 200 and r.json() == {"active": False}), (
        f"POST /introspect (client_secret_basic as self-registered {stranger['client_id']}) "
        f"token=<access token of client {agent.storage.client_info.client_id}> -> {r.status_code} {r.text}")
