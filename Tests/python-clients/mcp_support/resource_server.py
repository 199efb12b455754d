"""An MCP server (the SDK's MCPServer over streamable HTTP) that accepts only Trifactor's access tokens.

Two token verifiers, as a resource server in front of Trifactor would write them:

- `JwksVerifier`: the token is an RFC 9068 JWT (`typ` at+jwt) checked locally against the
  issuer's JWKS: signature, `iss`, `aud` (this server's URL, the RFC 8707 resource the client
  asked for), `exp`, and the claims the tool needs.
- `IntrospectionVerifier`: RFC 7662 introspection at the issuer, authenticated as an operator
  registered client (`trifactord clients create ... --auth-method client_secret_basic`), with the
  same checks on the answer.

Both return the SDK's `AccessToken` with `resource` set to the audience, and the server runs
with `AuthSettings(validate_token_resource=True, required_scopes=[...])`, so the SDK's bearer
middleware refuses a token for another resource (401) or without the scope (403), and serves the
RFC 9728 protected resource metadata that points clients at Trifactor.
"""

import threading
import time

import anyio
import httpx2
import jwt
import uvicorn
from pydantic import BaseModel

from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken, TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer

SCOPE = "mcp"
ACCEPTED_ALGS = ["ES256", "RS256"]


def _audiences(aud) -> list:
    return [aud] if isinstance(aud, str) else list(aud or [])


class _Verifier(TokenVerifier):
    """Common bookkeeping: why each refused token was refused (shown by failing tests)."""

    kind = "?"

    def __init__(self, issuer: str, resource: str):
        self.issuer, self.resource = issuer, resource
        self.refusals: list = []
        self.accepted = 0

    def _refuse(self, why: str):
        self.refusals.append(why)
        return None

    def _access_token(self, token: str, claims: dict) -> "AccessToken | None":
        if claims.get("iss") != self.issuer:
            return self._refuse(f"iss {claims.get('iss')!r} != {self.issuer!r}")
        if self.resource not in _audiences(claims.get("aud")):
            return self._refuse(f"aud {claims.get('aud')!r} does not name {self.resource!r}")
        exp = claims.get("exp")
        if not isinstance(exp, int) or exp <= time.time():
            return self._refuse(f"exp {exp!r} missing or past")
        for name in ("sub", "client_id"):
            if not isinstance(claims.get(name), str) or not claims[name]:
                return self._refuse(f"no {name} in {sorted(claims)}")
        self.accepted += 1
        return AccessToken(
            token=token, client_id=claims["client_id"], scopes=str(claims.get("scope", "")).split(),
            expires_at=exp, resource=self.resource, subject=claims["sub"], claims=claims,
        )


class JwksVerifier(_Verifier):
    kind = "jwks"

    def __init__(self, issuer: str, jwks_uri: str, resource: str):
        super().__init__(issuer, resource)
        self.jwks = jwt.PyJWKClient(jwks_uri, cache_keys=True, timeout=5)

    async def verify_token(self, token: str) -> "AccessToken | None":
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as e:
            return self._refuse(f"not a JWT: {e}")
        # RFC 9068 §4: reject tokens whose typ is not at+jwt (an ID token is not an access token).
        if str(header.get("typ", "")).lower() not in ("at+jwt", "application/at+jwt"):
            return self._refuse(f"typ {header.get('typ')!r}")
        try:
            key = await anyio.to_thread.run_sync(self.jwks.get_signing_key_from_jwt, token)
            claims = jwt.decode(
                token, key.key, algorithms=ACCEPTED_ALGS, issuer=self.issuer, audience=self.resource,
                options={"require": ["iss", "aud", "exp", "iat", "sub"]},
            )
        except jwt.PyJWTError as e:
            return self._refuse(f"{type(e).__name__}: {e}")
        return self._access_token(token, claims)


class IntrospectionVerifier(_Verifier):
    kind = "introspection"

    def __init__(self, issuer: str, endpoint: str, resource: str, client_id: str, client_secret: str):
        super().__init__(issuer, resource)
        self.endpoint, self.credentials = endpoint, (client_id, client_secret)
        self.answers: list = []

    async def verify_token(self, token: str) -> "AccessToken | None":
        async with httpx2.AsyncClient(timeout=5) as http:
            r = await http.post(self.endpoint, data={"token": token, "token_type_hint": "access_token"},
                                auth=self.credentials)
        if r.status_code != 200:
            return self._refuse(f"POST {self.endpoint} -> {r.status_code} {r.text}")
        claims = r.json()
        self.answers.append(claims)
        if claims.get("active") is not True:
            return self._refuse(f"inactive: {claims}")
        return self._access_token(token, claims)


class WhoAmI(BaseModel):
    sub: str
    acr: "str | None"
    amr: "list[str] | None"
    client_id: str
    aud: str
    scopes: list
    verified_by: str


def build_app(name: str, issuer: str, resource: str, verifier: _Verifier):
    """The Starlette app: /mcp behind the bearer middleware, the RFC 9728 metadata beside it."""
    server = MCPServer(
        name,
        token_verifier=verifier,
        auth=AuthSettings(issuer_url=issuer, resource_server_url=resource, required_scopes=[SCOPE],
                          validate_token_resource=True),
    )

    @server.tool(description="Who the bearer token speaks for, and how they signed in.")
    def whoami() -> WhoAmI:
        token = get_access_token()
        assert token is not None and token.claims is not None
        return WhoAmI(sub=token.subject, acr=token.claims.get("acr"), amr=token.claims.get("amr"),
                      client_id=token.client_id, aud=token.resource, scopes=token.scopes,
                      verified_by=verifier.kind)

    return server.streamable_http_app(streamable_http_path="/mcp")


class UvicornThread:
    """uvicorn serving `app` on 127.0.0.1:`port` in a daemon thread (its own event loop)."""

    def __init__(self, app, port: int):
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                                    lifespan="on", access_log=False))
        self.thread = threading.Thread(target=self.server.run, name=f"mcp-rs-{port}", daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 10
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(10)
