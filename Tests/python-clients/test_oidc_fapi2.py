"""A client held to the FAPI 2.0 Security Profile (`clients create --fapi2`, or every client with
TRIFACTOR_OIDC_FAPI2=1), driven end to end by a FAPI client made of joserfc parts: `private_key_jwt`
assertions whose audience is the issuer as a string, pushed requests with PKCE S256, DPoP-bound tokens, and
refresh tokens that stay the same (FAPI 2.0 §5.3.2.1 10) yet work only with the key. Ported from the FAPI 2.0
test plan: a plain authorization request, a push without PKCE or without client authentication, a token
request without a DPoP proof, and a client registered with a secret are each refused."""
import base64
import hashlib
import secrets
import subprocess
import time
from urllib.parse import urlencode

import requests
from joserfc import jwk, jwt

from oidc_support import (TIMEOUT, Browser, oauth_error, op, pkce_pair, running_provider,  # noqa: F401
                          verify_access_token)

ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


class FAPIClient:
    """A registered FAPI 2.0 client: its signing key (for assertions) and its DPoP key."""

    def __init__(self, provider):
        self.op = provider
        self.signing = jwk.ECKey.generate_key("P-256", parameters={"use": "sig", "alg": "ES256"})
        self.signing_kid = self.signing.thumbprint()
        public = {**self.signing.as_dict(private=False), "kid": self.signing_kid}
        self.client = provider.register(auth_method="private_key_jwt", jwks={"keys": [public]}, fapi2=True,
                                        grants="authorization_code refresh_token",
                                        scopes="openid offline_access")
        self.dpop = jwk.ECKey.generate_key("P-256")

    def assertion(self):
        now = int(time.time())
        return jwt.encode({"alg": "ES256", "kid": self.signing_kid},
                          {"iss": self.client.id, "sub": self.client.id, "aud": self.op.issuer, "iat": now,
                           "exp": now + 60, "jti": secrets.token_urlsafe(16)}, self.signing)

    def proof(self, method, url, token=None):
        claims = {"jti": secrets.token_urlsafe(16), "htm": method, "htu": url, "iat": int(time.time())}
        if token:
            claims["ath"] = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=").decode()
        return jwt.encode({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.dpop.as_dict(private=False)}, claims, self.dpop)

    def post(self, path, data, dpop=True, authenticate=True):
        url = self.op.issuer + path
        body = dict(data)
        if authenticate:
            body.update(client_assertion_type=ASSERTION, client_assertion=self.assertion())
        else:
            body["client_id"] = self.client.id
        headers = {"DPoP": self.proof("POST", url)} if dpop else {}
        return requests.post(url, data=body, headers=headers, timeout=TIMEOUT)

    def push(self, **params):
        return self.post("/par", {"response_type": "code", "redirect_uri": self.client.redirect_uri,
                                  "scope": "openid offline_access", **params}, dpop=False)


def test_a_fapi2_client_signs_in_through_par_pkce_dpop_and_private_key_jwt(op):
    fapi, user = FAPIClient(op), op.user()
    verifier, challenge = pkce_pair()
    state = secrets.token_urlsafe(16)
    pushed = fapi.push(code_challenge=challenge, code_challenge_method="S256", state=state)
    assert pushed.status_code == 201, pushed.text
    outcome = Browser(op).authorize(op.issuer + "/authorize?" + urlencode(
        {"client_id": fapi.client.id, "request_uri": pushed.json()["request_uri"]}), user)
    assert outcome.kind == "redirect" and outcome.params["iss"] == op.issuer and outcome.params["state"] == state
    exchange = {"grant_type": "authorization_code", "code": outcome.code, "redirect_uri": fapi.client.redirect_uri,
                "code_verifier": verifier}
    oauth_error(fapi.post("/token", exchange, dpop=False), 400, "invalid_dpop_proof")
    r = fapi.post("/token", exchange)
    assert r.status_code == 200 and r.json()["token_type"] == "DPoP", r.text
    tokens = r.json()
    assert verify_access_token(op, tokens["access_token"])["cnf"]["jkt"] == fapi.dpop.thumbprint()
    # §5.3.2.1 10: the refresh token is not rotated, and stays bound to the key.
    oauth_error(fapi.post("/token", {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
                          dpop=False), 400, "invalid_dpop_proof")
    for _ in range(2):
        again = fapi.post("/token", {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]})
        assert again.status_code == 200 and again.json()["refresh_token"] == tokens["refresh_token"], again.text
        assert again.json()["token_type"] == "DPoP"


def test_what_a_fapi2_client_may_not_do(op):
    fapi, user = FAPIClient(op), op.user()
    # A plain authorization request (§5.3.2.2 3): refused at the registered redirect URI.
    plain = Browser(op).authorize(op.authorize_url(fapi.client, state="s", code_challenge=pkce_pair()[1],
                                                   code_challenge_method="S256"), user)
    assert plain.kind == "redirect" and plain.params["error"] == "invalid_request", plain.describe()
    # A push without PKCE (§5.3.2.2 5), and one without client authentication (§5.3.2.2 4).
    oauth_error(fapi.push(), 400, "invalid_request")
    _, challenge = pkce_pair()
    oauth_error(fapi.post("/par", {"response_type": "code", "redirect_uri": fapi.client.redirect_uri,
                                   "code_challenge": challenge, "code_challenge_method": "S256"},
                          dpop=False, authenticate=False), 401, "invalid_client")


def test_a_fapi2_client_must_use_private_key_jwt(op):
    p = subprocess.run([op.binary, "clients", "create", "--name", "Not FAPI", "--redirect-uris",
                        "https://bank.example/cb", "--auth-method", "client_secret_basic", "--fapi2",
                        "--database-url", op.db_url, "--key-file", op.key_file], capture_output=True, text=True)
    assert p.returncode != 0 and "must be private_key_jwt for a FAPI 2.0 client" in p.stderr, p.stderr


def test_a_server_that_holds_every_client_to_fapi2():
    with running_provider("--oidc-fapi2", "1") as provider:
        assert provider.metadata["token_endpoint_auth_methods_supported"] == ["private_key_jwt"]
        assert provider.metadata["require_pushed_authorization_requests"] is True
        secret_client = provider.register()
        r = requests.post(provider.issuer + "/par", auth=(secret_client.id, secret_client.secret), timeout=TIMEOUT,
                          data={"response_type": "code", "redirect_uri": secret_client.redirect_uri})
        oauth_error(r, 401, "invalid_client")
        fapi = FAPIClient(provider)
        _, challenge = pkce_pair()
        assert fapi.push(code_challenge=challenge, code_challenge_method="S256").status_code == 201
