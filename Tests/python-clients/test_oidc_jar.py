"""Signed request objects (RFC 9101, JAR) pushed to `/par` (RFC 9126 §3), as FAPI 2.0 and its Message Signing
profile use them: a FAPI client signs its authorization request with the key of its registered JWK Set and
completes the flow through the hosted pages; the object's claims are the request, the form's other parameters
are not used; and each rule is answered `invalid_request_object`: the audience, the issuer, `exp`, `nbf` (required
of FAPI clients, at most 60 minutes old, `exp` at most 60 minutes after it), `alg: none`, an unregistered key, a
wrong `typ`, a replayed `jti`. Then PS256 and EdDSA (Ed25519), which FAPI 2.0 §5.4.1 allows beside ES256: client
assertions, DPoP proofs and request objects signed with them are accepted, RS256 is not, for a FAPI client."""
import base64
import json
import secrets
import time
from urllib.parse import urlencode

import pytest
import requests
from joserfc import jwk, jws, jwt

from test_oidc_dpop import full_length_ec_key
from test_oidc_fapi2 import ASSERTION, FAPIClient
from oidc_support import (TIMEOUT, Browser, oauth_error, op, pkce_pair,  # noqa: F401
                          verify_access_token)

ALGORITHMS = ["ES256", "RS256", "PS256", "EdDSA"]
TYP = "oauth-authz-req+jwt"


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class JARClient(FAPIClient):
    """A FAPI 2.0 client (or, with `fapi2=False`, a plain `private_key_jwt` one) that pushes signed request
    objects; `extra_keys` are registered beside its P-256 key, each with its thumbprint as `kid`."""

    def __init__(self, provider, fapi2=True, extra_keys=()):
        self.op = provider
        self.signing = full_length_ec_key()
        self.signing_kid = self.signing.thumbprint()
        self.keys = {"ES256": self.signing, **{alg: key for alg, key in extra_keys}}
        unique = {key.thumbprint(): key for key in self.keys.values()}  # one RSA key may sign PS256 and RS256
        public = [{**key.as_dict(private=False), "kid": kid} for kid, key in unique.items()]
        self.client = provider.register(auth_method="private_key_jwt", jwks={"keys": public}, fapi2=fapi2,
                                        grants="authorization_code refresh_token", scopes="openid offline_access")
        self.dpop = full_length_ec_key()
        self.verifier, self.challenge = pkce_pair()

    def assertion(self, aud=None, iat_ahead=0, alg="ES256"):
        now = int(time.time())
        key = self.keys[alg]
        return jwt.encode({"alg": alg, "kid": key.thumbprint()},
                          {"iss": self.client.id, "sub": self.client.id, "aud": aud or self.op.issuer,
                           "iat": now + iat_ahead, "exp": now + 90, "jti": secrets.token_urlsafe(16)}, key,
                          algorithms=ALGORITHMS)

    def proof(self, method, url, token=None, key=None, alg=None):
        key = key or self.dpop
        alg = alg or {"EC": "ES256", "OKP": "EdDSA"}.get(key.key_type, "RS256")
        claims = {"jti": secrets.token_urlsafe(16), "htm": method, "htu": url, "iat": int(time.time())}
        return jwt.encode({"typ": "dpop+jwt", "alg": alg, "jwk": key.as_dict(private=False)}, claims, key,
                          algorithms=ALGORITHMS)

    def claims(self, **changes):
        """The request's parameters and the object's own claims; a change to None drops the claim."""
        now = int(time.time())
        claims = {"iss": self.client.id, "aud": self.op.issuer, "client_id": self.client.id, "iat": now,
                  "nbf": now, "exp": now + 300, "jti": secrets.token_urlsafe(16), "response_type": "code",
                  "redirect_uri": self.client.redirect_uri, "scope": "openid offline_access",
                  "code_challenge": self.challenge, "code_challenge_method": "S256",
                  "state": secrets.token_urlsafe(8), "max_age": 3600}
        claims.update(changes)
        return {name: value for name, value in claims.items() if value is not None}

    def request_object(self, claims=None, alg="ES256", key=None, **header):
        key = key or self.keys[alg]
        head = {"alg": alg, "kid": key.thumbprint(), "typ": TYP, **header}
        head = {name: value for name, value in head.items() if value is not None}
        # jws, not jwt: joserfc's jwt.encode writes typ JWT when none is given, which this server refuses.
        payload = json.dumps(claims or self.claims()).encode()
        return jws.serialize_compact(head, payload, key, algorithms=ALGORITHMS)

    def push_object(self, obj, assertion=None, **outside):
        return self.post("/par", {"request": obj, **outside}, dpop=False, assertion=assertion)

    def sign_in(self, request_uri, user):
        return Browser(self.op).authorize(self.op.issuer + "/authorize?" + urlencode(
            {"client_id": self.client.id, "request_uri": request_uri}), user)


def test_discovery_lists_request_objects_and_their_algorithms(op):
    assert op.metadata["request_parameter_supported"] is False
    assert op.metadata["request_object_signing_alg_values_supported"] == ["ES256", "EdDSA", "PS256", "RS256"]
    assert op.metadata["token_endpoint_auth_signing_alg_values_supported"] == ["ES256", "EdDSA", "PS256", "RS256"]
    assert op.metadata["dpop_signing_alg_values_supported"] == ["ES256", "EdDSA", "PS256", "RS256"]


def test_a_fapi2_client_pushes_a_signed_request_object_and_signs_in(op):
    client, user = JARClient(op), op.user()
    claims = client.claims()
    # RFC 9126 §3: the parameters outside the object are not used, not even to fill a gap.
    pushed = client.push_object(client.request_object(claims), redirect_uri="https://attacker.example/cb",
                                state="outside", scope="openid")
    assert pushed.status_code == 201, pushed.text
    outcome = client.sign_in(pushed.json()["request_uri"], user)
    assert outcome.kind == "redirect", outcome.describe()
    assert outcome.location.startswith(client.client.redirect_uri), outcome.location
    assert outcome.params["state"] == claims["state"] and outcome.params["iss"] == op.issuer
    r = client.post("/token", {"grant_type": "authorization_code", "code": outcome.code,
                               "redirect_uri": client.client.redirect_uri, "code_verifier": client.verifier})
    assert r.status_code == 200 and r.json()["token_type"] == "DPoP", r.text
    assert "offline_access" in r.json()["scope"].split() and "refresh_token" in r.json()


def test_the_object_alone_is_the_request(op):
    client = JARClient(op)
    # A parameter missing from the object is missing, whatever the form says.
    missing = client.push_object(client.request_object(client.claims(redirect_uri=None)),
                                 redirect_uri=client.client.redirect_uri)
    assert "redirect_uri is required" in oauth_error(missing, 400, "invalid_request")["error_description"]
    # A number claim is read as its decimal text, and checked as the parameter would be.
    bad_age = client.push_object(client.request_object(client.claims(max_age=-1)))
    assert "max_age" in oauth_error(bad_age, 400, "invalid_request")["error_description"]
    # The object names a redirect URI the client did not register: refused, though the form's is registered.
    elsewhere = client.push_object(client.request_object(client.claims(redirect_uri="https://attacker.example/cb")),
                                   redirect_uri=client.client.redirect_uri)
    oauth_error(elsewhere, 400, "invalid_request")


def _unsigned(claims):
    return b64(json.dumps({"alg": "none", "typ": TYP}).encode()) + "." + b64(json.dumps(claims).encode()) + "."


REFUSALS = {
    "another audience": (lambda c: c.request_object(c.claims(aud="https://other.example")), "aud"),
    "another issuer": (lambda c: c.request_object(c.claims(iss="someone-else")), "iss"),
    "another client_id": (lambda c: c.request_object(c.claims(client_id="someone-else")), "client_id"),
    "an expired exp": (lambda c: c.request_object(c.claims(exp=int(time.time()) - 120)), "expired"),
    "no exp": (lambda c: c.request_object(c.claims(exp=None)), "exp"),
    "no nbf (FAPI)": (lambda c: c.request_object(c.claims(nbf=None)), "nbf"),
    "an nbf older than 60 minutes": (
        lambda c: c.request_object(c.claims(nbf=int(time.time()) - 3700, iat=int(time.time()) - 3700)), "60 minutes"),
    "an exp more than 60 minutes after nbf": (
        lambda c: c.request_object(c.claims(exp=int(time.time()) + 3700)), "60 minutes"),
    "an nbf ahead": (lambda c: c.request_object(c.claims(nbf=int(time.time()) + 600)), "not valid yet"),
    "alg none": (lambda c: _unsigned(c.claims()), "unsigned"),
    "an unregistered key": (lambda c: c.request_object(key=full_length_ec_key(), kid=c.signing_kid), "signature"),
    "an unknown kid": (lambda c: c.request_object(key=full_length_ec_key()), "kid"),
    "another typ": (lambda c: c.request_object(typ="JWT"), "typ"),
    "a request inside": (lambda c: c.request_object(c.claims(request="x.y.z")), "request"),
    "not a JWS": (lambda c: "not-a-jwt", "compact JWS"),
}


@pytest.mark.parametrize("case", REFUSALS, ids=list(REFUSALS))
def test_a_request_object_that_breaks_a_rule_is_refused(op, case):
    client = JARClient(op)
    make, word = REFUSALS[case]
    body = oauth_error(client.push_object(make(client)), 400, "invalid_request_object")
    assert word in body["error_description"], body


def test_a_request_object_is_taken_once(op):
    client = JARClient(op)
    obj = client.request_object()
    assert client.push_object(obj).status_code == 201
    replayed = oauth_error(client.push_object(obj), 400, "invalid_request_object")
    assert "jti" in replayed["error_description"], replayed


def test_a_client_without_fapi2_may_leave_out_nbf_typ_and_kid(op):
    client = JARClient(op, fapi2=False)
    obj = client.request_object(client.claims(nbf=None, jti=None), typ=None, kid=None)
    pushed = client.push_object(obj)
    assert pushed.status_code == 201, pushed.text
    # Yet an exp more than an hour ahead is refused: a request object is pushed within seconds.
    far = client.request_object(client.claims(nbf=None, exp=int(time.time()) + 7200))
    oauth_error(client.push_object(far), 400, "invalid_request_object")


def test_a_public_or_secret_client_cannot_push_a_request_object(op):
    secret = op.register()
    r = requests.post(op.issuer + "/par", data={"request": _unsigned({"iss": secret.id})},
                      auth=(secret.id, secret.secret), timeout=TIMEOUT)
    oauth_error(r, 400, "invalid_request_object")
    # Sent straight to the authorization endpoint, a request object is still not supported (OIDC Core §6.1).
    outcome = Browser(op).authorize(op.authorize_url(secret, state="s", request="x.y.z"))
    assert outcome.params.get("error") == "request_not_supported", outcome.describe()


def ed25519_key():
    return jwk.OKPKey.generate_key("Ed25519")


def test_ps256_and_eddsa_assertions_proofs_and_request_objects_for_a_fapi2_client(op):
    rsa = jwk.RSAKey.generate_key(2048)
    client, user = JARClient(op, extra_keys=[("PS256", rsa), ("EdDSA", ed25519_key()), ("RS256", rsa)]), op.user()
    # FAPI 2.0 §5.4.1: RS256 is refused of a FAPI client, in an assertion and a request object alike.
    oauth_error(client.push_object(client.request_object(), assertion=client.assertion(alg="RS256")), 401,
                "invalid_client")
    oauth_error(client.push_object(client.request_object(alg="RS256")), 400, "invalid_request_object")
    for alg in ("PS256", "EdDSA"):
        claims = client.claims()
        pushed = client.push_object(client.request_object(claims, alg=alg), assertion=client.assertion(alg=alg))
        assert pushed.status_code == 201, (alg, pushed.text)
        outcome = client.sign_in(pushed.json()["request_uri"], user)
        assert outcome.kind == "redirect" and outcome.params["state"] == claims["state"], outcome.describe()
        # A DPoP proof of an Ed25519 key, then of an RSA key signed PS256.
        dpop = ed25519_key() if alg == "EdDSA" else jwk.RSAKey.generate_key(2048)
        url = op.issuer + "/token"
        r = requests.post(url, data={"grant_type": "authorization_code", "code": outcome.code,
                                     "redirect_uri": client.client.redirect_uri, "code_verifier": client.verifier,
                                     "client_assertion_type": ASSERTION, "client_assertion": client.assertion(alg=alg)},
                          headers={"DPoP": client.proof("POST", url, key=dpop, alg=alg)}, timeout=TIMEOUT)
        assert r.status_code == 200 and r.json()["token_type"] == "DPoP", (alg, r.text)
        assert verify_access_token(op, r.json()["access_token"])["cnf"]["jkt"] == dpop.thumbprint()
    # An RS256 DPoP proof is refused of a FAPI client.
    url = op.issuer + "/token"
    r = requests.post(url, data={"grant_type": "refresh_token", "refresh_token": "x",
                                 "client_assertion_type": ASSERTION, "client_assertion": client.assertion()},
                      headers={"DPoP": client.proof("POST", url, key=rsa, alg="RS256")}, timeout=TIMEOUT)
    oauth_error(r, 400, "invalid_dpop_proof")
