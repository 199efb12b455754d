"""Relying parties built on authlib (`OAuth2Session`) sign users in through Trifactor's OpenID Provider.

Each kind of client (client_secret_basic, client_secret_post, private_key_jwt, and a public client with
PKCE) runs the whole authorization code flow through the hosted pages with a password and an
authenticator-app code, then checks what it got the way a relying party must: the state and `iss` of the
redirect (RFC 9207), the ID token against the JWK Set (OIDC Core §3.1.3.7) and the access token as an
RFC 9068 JWT. A machine client gets tokens with client_credentials.
"""

import secrets

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7523 import PrivateKeyJWT

from oidc_support import (ec_key, ACR_MFA, Browser, header_of, oauth_error, op, verify_access_token,  # noqa: F401
                          verify_id_token)


def _private_key_jwt_client(op):
    """A client that proves itself with an ES256 assertion; its public key registered as a JWK Set."""
    key = ec_key()
    kid = key.thumbprint()
    public = {**key.as_dict(is_private=False), "kid": kid, "alg": "ES256", "use": "sig"}
    client = op.register(auth_method="private_key_jwt", jwks={"keys": [public]})
    session = OAuth2Session(client.id, key, token_endpoint_auth_method="private_key_jwt")
    session.register_client_auth_method(
        PrivateKeyJWT(op.url("token_endpoint"), headers={"kid": kid}, alg="ES256"))
    return client, session


def _client_and_session(op, method):
    if method == "private_key_jwt":
        return _private_key_jwt_client(op)
    if method == "none":
        client = op.register(auth_method="none")
        return client, OAuth2Session(client.id, token_endpoint_auth_method="none")
    # The client_secret_post one asks for RS256 ID tokens, for relying parties that know only RS256.
    client = op.register(auth_method=method, id_token_alg="RS256" if method == "client_secret_post" else None)
    return client, OAuth2Session(client.id, client.secret, token_endpoint_auth_method=method)


@pytest.mark.parametrize("method, pkce", [
    ("client_secret_basic", False),
    ("client_secret_post", True),
    ("private_key_jwt", True),
    ("none", True),
])
def test_an_authlib_relying_party_signs_a_user_in_with_password_and_totp_and_can_trust_its_tokens(op, method, pkce):
    client, session = _client_and_session(op, method)
    session.redirect_uri = client.redirect_uri
    session.scope = "openid email"
    if pkce:
        session.code_challenge_method = "S256"
    user = op.user()
    nonce = secrets.token_urlsafe(16)
    verifier = generate_token(64) if pkce else None

    url, state = session.create_authorization_url(op.url("authorization_endpoint"), nonce=nonce,
                                                  code_verifier=verifier)
    browser = Browser(op)
    outcome = browser.authorize(url, user)

    # The user saw the email, password, authenticator-app and consent pages, then went back to the app.
    assert outcome.steps == ["sign-in", "password", "second-factor", "consent"], outcome.describe()
    assert outcome.kind == "redirect" and outcome.location.startswith(client.redirect_uri + "?"), outcome.describe()
    assert outcome.params.get("state") == state, outcome.describe()
    assert outcome.params.get("iss") == op.issuer, outcome.describe()  # RFC 9207 §2
    assert outcome.code, outcome.describe()
    assert browser.cookie("tf_session"), "no single sign-on session cookie after signing in"

    extra = {"code_verifier": verifier} if pkce else {}
    token = session.fetch_token(op.url("token_endpoint"), authorization_response=outcome.location, state=state,
                                **extra)
    assert token["token_type"].lower() == "bearer", token
    assert token.get("refresh_token"), token
    assert set(token["scope"].split()) == {"openid", "email"}, token

    id_claims = verify_id_token(op, token["id_token"], client.id, nonce=nonce)
    expected_alg = "RS256" if method == "client_secret_post" else "ES256"
    assert header_of(token["id_token"])["alg"] == expected_alg, header_of(token["id_token"])
    assert id_claims["nonce"] == nonce
    assert id_claims["acr"] == ACR_MFA, id_claims
    assert {"pwd", "otp", "mfa"} <= set(id_claims["amr"]), id_claims
    assert isinstance(id_claims["auth_time"], int) and abs(id_claims["auth_time"] - id_claims["iat"]) < 60, id_claims
    assert id_claims.get("sid"), id_claims
    assert id_claims["sub"], id_claims

    access = verify_access_token(op, token["access_token"])
    assert header_of(token["access_token"])["typ"] == "at+jwt"
    assert access["client_id"] == client.id, access
    assert access["sub"] == id_claims["sub"], (access, id_claims)
    assert set(access["scope"].split()) == {"openid", "email"}, access
    assert 0 < access["exp"] - access["iat"] <= 300, access

    # The access token opens UserInfo, with the same subject and the email the scope released.
    info = session.get(op.url("userinfo_endpoint"))
    assert info.status_code == 200, info.text
    assert info.json()["sub"] == id_claims["sub"], info.json()
    assert info.json().get("email") == user.email, info.json()
    assert info.json().get("email_verified") is True, info.json()


def test_a_machine_client_gets_a_scoped_access_token_with_client_credentials(op):
    client = op.register(grants="client_credentials", scopes="reports:read reports:write")
    session = OAuth2Session(client.id, client.secret, token_endpoint_auth_method="client_secret_basic",
                            scope="reports:read")
    token = session.fetch_token(op.url("token_endpoint"), grant_type="client_credentials")
    assert token["scope"] == "reports:read", token
    assert "refresh_token" not in token and "id_token" not in token, token
    claims = verify_access_token(op, token["access_token"])
    assert claims["sub"] == client.id and claims["client_id"] == client.id, claims
    assert claims["scope"] == "reports:read", claims

    # A resource server asks the provider about it.
    r = op.post(client, "/introspect", {"token": token["access_token"]})
    assert r.status_code == 200 and r.json()["active"] is True, r.text
    assert r.json()["scope"] == "reports:read", r.text

    # It may not ask for a scope it was not registered for, nor for a user's.
    for scope in ("admin", "openid"):
        r = op.token(client, {"grant_type": "client_credentials", "scope": scope})
        oauth_error(r, 400, "invalid_scope")

    # A client not registered for the grant is refused it.
    web = op.register()
    r = op.token(web, {"grant_type": "client_credentials"})
    oauth_error(r, 400, "unauthorized_client")


def test_the_discovery_documents_describe_the_provider_a_client_talks_to(op):
    for path in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
        doc = requests.get(op.issuer + path, timeout=5).json()
        assert doc["issuer"] == op.issuer, doc
        for name, suffix in (("authorization_endpoint", "/authorize"), ("token_endpoint", "/token"),
                             ("userinfo_endpoint", "/userinfo"), ("jwks_uri", "/jwks"),
                             ("revocation_endpoint", "/revoke"), ("introspection_endpoint", "/introspect")):
            assert doc[name] == op.issuer + suffix, (name, doc[name])
        assert doc["code_challenge_methods_supported"] == ["S256"], doc
        assert doc["authorization_response_iss_parameter_supported"] is True, doc
        assert {"urn:trifactor:acr:password", "urn:trifactor:acr:mfa", "urn:trifactor:acr:hwk"} \
            <= set(doc["acr_values_supported"]), doc
    keys = op.jwks()["keys"]
    assert {k["alg"] for k in keys} >= {"ES256", "RS256"}, keys
    assert all("d" not in k and "p" not in k for k in keys), "private key material in the JWK Set"


def test_a_jwk_set_the_server_cannot_read_is_refused_at_registration(op):
    # A P-256 key whose x lost its leading zero byte (31 bytes, as some JOSE libraries write it): the token endpoint
    # would refuse every assertion it signs, so registration refuses the set, saying why (RFC 7518 §6.2.1.2).
    import base64
    import json
    import subprocess
    public = ec_key().as_dict(is_private=False)
    x = base64.urlsafe_b64decode(public["x"] + "=")
    public["x"] = base64.urlsafe_b64encode(x[1:]).rstrip(b"=").decode()
    path = op.tmp / "short-coordinate.jwks.json"
    path.write_text(json.dumps({"keys": [public]}))
    p = subprocess.run([op.binary, "clients", "create", "--name", "Short", "--redirect-uris", "https://app.example/cb",
                        "--auth-method", "private_key_jwt", "--jwks-file", str(path), "--database-url", op.db_url,
                        "--key-file", op.key_file], capture_output=True, text=True)
    assert p.returncode != 0 and "x and y of 32 bytes each" in p.stderr, p.stderr
