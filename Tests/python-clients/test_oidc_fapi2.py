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

from test_oidc_dpop import full_length_ec_key
from oidc_support import (TIMEOUT, Browser, oauth_error, op, pkce_pair, running_provider,  # noqa: F401
                          verify_access_token)

ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


class FAPIClient:
    """A registered FAPI 2.0 client: its signing key (for assertions) and its DPoP key."""

    def __init__(self, provider):
        self.op = provider
        self.signing = full_length_ec_key()
        self.signing_kid = self.signing.thumbprint()
        public = {**self.signing.as_dict(private=False), "kid": self.signing_kid}
        self.client = provider.register(auth_method="private_key_jwt", jwks={"keys": [public]}, fapi2=True,
                                        grants="authorization_code refresh_token",
                                        scopes="openid offline_access")
        self.dpop = full_length_ec_key()

    def assertion(self, aud=None, iat_ahead=0):
        now = int(time.time())
        return jwt.encode({"alg": "ES256", "kid": self.signing_kid},
                          {"iss": self.client.id, "sub": self.client.id, "aud": aud or self.op.issuer,
                           "iat": now + iat_ahead, "exp": now + 90, "jti": secrets.token_urlsafe(16)}, self.signing)

    def proof(self, method, url, token=None, key=None):
        key = key or self.dpop
        alg = "ES256" if key.key_type == "EC" else "RS256"
        claims = {"jti": secrets.token_urlsafe(16), "htm": method, "htu": url, "iat": int(time.time())}
        if token:
            claims["ath"] = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=").decode()
        return jwt.encode({"typ": "dpop+jwt", "alg": alg, "jwk": key.as_dict(private=False)}, claims, key)

    def post(self, path, data, dpop=True, authenticate=True, assertion=None, dpop_key=None):
        url = self.op.issuer + path
        body = dict(data)
        if authenticate:
            body.update(client_assertion_type=ASSERTION, client_assertion=assertion or self.assertion())
        else:
            body["client_id"] = self.client.id
        headers = {"DPoP": self.proof("POST", url, key=dpop_key)} if dpop else {}
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
    # §5.3.2.1 9 (final): the refresh token is not rotated. A confidential client's refresh token is constrained by
    # its authentication (RFC 9449 §5), so a new DPoP key may take over; every request still brings a proof.
    oauth_error(fapi.post("/token", {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
                          dpop=False), 400, "invalid_dpop_proof")
    for key in (fapi.dpop, full_length_ec_key()):
        again = fapi.post("/token", {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
                          dpop_key=key)
        assert again.status_code == 200 and again.json()["refresh_token"] == tokens["refresh_token"], again.text
        assert verify_access_token(op, again.json()["access_token"])["cnf"]["jkt"] == key.thumbprint()
    # A revoked grant's refresh token gives nothing, rotation or not.
    assert fapi.post("/revoke", {"token": tokens["refresh_token"]}, dpop=False).status_code == 200
    oauth_error(fapi.post("/token", {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}),
                400, "invalid_grant")


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


def test_a_fapi2_clients_assertions_name_the_issuer_as_a_string_and_its_keys_sign_es256(op):
    fapi = FAPIClient(op)
    _, challenge = pkce_pair()
    data = {"response_type": "code", "redirect_uri": fapi.client.redirect_uri, "code_challenge": challenge,
            "code_challenge_method": "S256"}
    # §5.3.2.1 8 (final): the issuer as a string, nothing else: not in an array, not an endpoint's URL.
    for aud in ([op.issuer], op.issuer + "/token", op.issuer + "/par"):
        oauth_error(fapi.post("/par", data, dpop=False, assertion=fapi.assertion(aud=aud)), 401, "invalid_client")
    # §5.3.2.1 13: iat up to 10 s ahead is taken; a minute and more is not.
    assert fapi.post("/par", data, dpop=False, assertion=fapi.assertion(iat_ahead=10)).status_code == 201
    oauth_error(fapi.post("/par", data, dpop=False, assertion=fapi.assertion(iat_ahead=120)), 401, "invalid_client")
    # §5.4.1: an RS256 DPoP proof is refused for a FAPI client.
    rsa = jwk.RSAKey.generate_key(2048)
    oauth_error(fapi.post("/token", {"grant_type": "refresh_token", "refresh_token": "x" * 43}, dpop_key=rsa),
                400, "invalid_dpop_proof")


def test_a_fapi2_client_must_use_private_key_jwt(op):
    p = subprocess.run([op.binary, "clients", "create", "--name", "Not FAPI", "--redirect-uris",
                        "https://bank.example/cb", "--auth-method", "client_secret_basic", "--fapi2",
                        "--database-url", op.db_url, "--key-file", op.key_file], capture_output=True, text=True)
    assert p.returncode != 0 and "must be private_key_jwt for a FAPI 2.0 client" in p.stderr, p.stderr
    jwks = op.tmp / "rs256-client.jwks.json"
    jwks.write_text('{"keys": []}')
    p = subprocess.run([op.binary, "clients", "create", "--name", "RS256", "--redirect-uris", "https://bank.example/cb",
                        "--auth-method", "private_key_jwt", "--jwks-file", str(jwks), "--id-token-alg", "RS256",
                        "--fapi2", "--database-url", op.db_url, "--key-file", op.key_file], capture_output=True,
                       text=True)
    assert p.returncode != 0 and "must be ES256 for a FAPI 2.0 client" in p.stderr, p.stderr


def test_a_server_that_holds_every_client_to_fapi2():
    with running_provider("--oidc-fapi2", "1") as provider:
        assert provider.metadata["token_endpoint_auth_methods_supported"] == ["private_key_jwt"]
        assert provider.metadata["require_pushed_authorization_requests"] is True
        # FAPI 2.0 §5.4.1: PS256, ES256 and EdDSA, never RS256.
        assert provider.metadata["dpop_signing_alg_values_supported"] == ["ES256", "EdDSA", "PS256"]
        assert provider.metadata["request_object_signing_alg_values_supported"] == ["ES256", "EdDSA", "PS256"]
        # Every client is registered as a FAPI 2.0 client: one with a secret is refused.
        p = subprocess.run([provider.binary, "clients", "create", "--name", "Secret", "--redirect-uris",
                            "https://bank.example/cb", "--oidc-fapi2", "1", "--database-url", provider.db_url,
                            "--key-file", provider.key_file], capture_output=True, text=True)
        assert p.returncode != 0 and "must be private_key_jwt" in p.stderr, p.stderr
        fapi = FAPIClient(provider)
        _, challenge = pkce_pair()
        assert fapi.push(code_challenge=challenge, code_challenge_method="S256").status_code == 201
