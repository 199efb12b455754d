"""Pushed authorization requests (RFC 9126) against a real provider on loopback: a client pushes its request with
its own authentication (a secret, or a private_key_jwt made by authlib), sends the browser with only
`client_id` and `request_uri`, and the hosted sign-in ends in a code for exactly the pushed request. Ported from
the FAPI 2.0 test plan's PAR checks: the reference is single use, expires, belongs to its client, and a provider
that requires PAR refuses a plain request."""
import secrets
import time
from urllib.parse import urlencode

import pytest
import requests
from authlib.oauth2.rfc7523 import private_key_jwt_sign

from oidc_support import (ec_key, CALLBACK, TIMEOUT, Browser, oauth_error, op, pkce_pair,  # noqa: F401
                          redeem, running_provider, verify_id_token)

URN = "urn:ietf:params:oauth:request_uri:"


def push(op, client, **params):
    data = {"response_type": "code", "redirect_uri": client.redirect_uri, "scope": "openid", **params}
    return op.post(client, "/par", {k: v for k, v in data.items() if v is not None})


def authorize_with(op, client_id, request_uri, **extra):
    return op.issuer + "/authorize?" + urlencode({"client_id": client_id, "request_uri": request_uri, **extra})


def test_discovery_names_the_endpoint_and_that_plain_requests_still_work(op):
    assert op.metadata["pushed_authorization_request_endpoint"] == op.issuer + "/par"
    assert op.metadata["require_pushed_authorization_requests"] is False


def test_a_pushed_request_signs_in_with_only_its_reference_in_the_url(op):
    client, user = op.register(), op.user()
    verifier, challenge = pkce_pair()
    state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    r = push(op, client, state=state, nonce=nonce, code_challenge=challenge, code_challenge_method="S256")
    assert r.status_code == 201, r.text
    assert r.headers["Cache-Control"] == "no-store" and r.headers["Content-Type"] == "application/json"
    pushed = r.json()
    assert pushed["expires_in"] == 60 and pushed["request_uri"].startswith(URN), pushed
    assert len(pushed["request_uri"]) - len(URN) == 43  # 256 random bits
    # RFC 9126 §4: only the pushed parameters count; what else the URL carries is ignored.
    outcome = Browser(op).authorize(
        authorize_with(op, client.id, pushed["request_uri"], state="not-the-pushed-state", scope="openid email"), user)
    assert outcome.kind == "redirect" and outcome.code, outcome.describe()
    assert outcome.params["state"] == state and outcome.params["iss"] == op.issuer, outcome.describe()
    tokens = redeem(op, client, outcome.code, code_verifier=verifier)
    assert tokens.status_code == 200, tokens.text
    assert tokens.json()["scope"] == "openid"
    assert verify_id_token(op, tokens.json()["id_token"], client.id, nonce=nonce)["nonce"] == nonce
    # The pushed PKCE challenge holds: a code redeemed without its verifier is refused.
    again = push(op, client, code_challenge=challenge, code_challenge_method="S256").json()
    second = Browser(op).authorize(authorize_with(op, client.id, again["request_uri"]), user)
    oauth_error(redeem(op, client, second.code), 400, "invalid_grant")


def test_a_request_uri_is_used_once_by_its_own_client_within_its_minute(op):
    client, other, user = op.register(), op.register(), op.user()
    reference = push(op, client).json()["request_uri"]
    # Another client naming it finds nothing (and does not spend it).
    stranger = Browser(op).authorize(authorize_with(op, other.id, reference), user)
    assert stranger.kind == "page" and stranger.response.status_code == 400, stranger.describe()
    assert "expired or was used already" in stranger.response.text
    first = Browser(op).authorize(authorize_with(op, client.id, reference), user)
    assert first.kind == "redirect" and first.code, first.describe()
    # A second load of the same reference (a replay, another tab) starts nothing.
    replay = Browser(op).authorize(authorize_with(op, client.id, reference), user)
    assert replay.kind == "page" and replay.response.status_code == 400, replay.describe()
    assert "text/html" in replay.response.headers["Content-Type"]
    # One never issued (whatever else the URL says, as it is ignored).
    page = Browser(op).authorize(authorize_with(op, client.id, URN + "A" * 43, redirect_uri=client.redirect_uri,
                                                response_type="code"), user)
    assert page.kind == "page" and page.response.status_code == 400, page.describe()
    assert "expired or was used already" in page.response.text
    # A HEAD (a link preview) spends nothing.
    fresh = push(op, client).json()["request_uri"]
    assert requests.head(authorize_with(op, client.id, fresh), timeout=TIMEOUT).status_code == 200
    assert Browser(op).authorize(authorize_with(op, client.id, fresh), user).code
    # Expired: a second instance whose clock is 61 s ahead sees the minute over.
    late = push(op, client).json()["request_uri"]
    with op.instance("--clock-offset", "61") as ahead:
        browser = Browser(op, base=ahead)
        expired = browser.authorize(ahead + "/authorize?" + urlencode({"client_id": client.id, "request_uri": late}),
                                    user)
    assert expired.kind == "page" and expired.response.status_code == 400, expired.describe()


def test_pushes_are_refused_with_the_token_endpoints_error_form(op):
    client, public = op.register(), op.register(auth_method="none")
    # Client authentication as at the token endpoint (RFC 9126 §2).
    r = requests.post(op.issuer + "/par", data={"response_type": "code", "redirect_uri": client.redirect_uri},
                      auth=(client.id, "not-the-secret"), timeout=TIMEOUT)
    oauth_error(r, 401, "invalid_client")
    r = requests.post(op.issuer + "/par", data={"client_id": client.id, "response_type": "code",
                                                "redirect_uri": client.redirect_uri}, timeout=TIMEOUT)
    oauth_error(r, 401, "invalid_client")
    # §2.1: request_uri is not pushed; client_id is the authenticated client's.
    oauth_error(push(op, client, request_uri=URN + "x" * 43), 400, "invalid_request")
    oauth_error(push(op, client, client_id=public.id), 401, "invalid_client")  # another client's id with our secret
    # Checked as the authorization endpoint checks it, answered in the token endpoint's form (§2.3).
    oauth_error(push(op, client, redirect_uri="https://attacker.example/cb"), 400, "invalid_request")
    oauth_error(push(op, client, redirect_uri=None), 400, "invalid_request")
    oauth_error(push(op, client, response_type="token"), 400, "unsupported_response_type")
    oauth_error(push(op, public), 400, "invalid_request")  # a public client without PKCE
    oauth_error(push(op, client, code_challenge="x" * 43, code_challenge_method="plain"), 400, "invalid_request")
    # RFC 9126 §3: a pushed request object must be signed (test_oidc_jar.py has the rest).
    oauth_error(push(op, client, request="eyJhbGciOiJub25lIn0.e30."), 400, "invalid_request_object")
    r = requests.post(op.issuer + "/par", data="response_type=code&response_type=code&redirect_uri=" + CALLBACK,
                      headers={"Content-Type": "application/x-www-form-urlencoded"},
                      auth=(client.id, client.secret), timeout=TIMEOUT)
    oauth_error(r, 400, "invalid_request")
    # Too much: the parameters a push keeps weigh at most 16 KiB; unknown ones are dropped, not kept.
    too_much = oauth_error(push(op, client, state="s" * 2000, nonce="n" * 500, login_hint="h" * 200,
                     **{"acr_values": "x " * 1000, "ui_locales": "de " * 600, "resource": "https://r.example/" + "r" * 1900,
                        "id_token_hint": "i" * 2000, "code_challenge": "c" * 2000, "max_age": "1" * 2000,
                        "prompt": "p" * 2000, "response_mode": "q" * 2000, "claims": "c" * 2000, "display": "d" * 2000}),
                           400, "invalid_request")
    assert "larger than 16 KiB" in too_much["error_description"], too_much
    assert push(op, client, **{f"unknown_{i}": "u" * 2000 for i in range(20)}).status_code == 201
    # A public client with PKCE may push (it authenticates with its client_id alone, as at the token endpoint).
    _, challenge = pkce_pair()
    assert push(op, public, code_challenge=challenge, code_challenge_method="S256").status_code == 201


def test_a_private_key_jwt_client_pushes_with_an_assertion_for_the_issuer(op):
    key = ec_key()
    public = {**key.as_dict(is_private=False), "kid": key.thumbprint(), "alg": "ES256", "use": "sig"}
    client = op.register(auth_method="private_key_jwt", jwks={"keys": [public]})
    user = op.user()

    def assertion(audience):
        signed = private_key_jwt_sign(key, client.id, audience, alg="ES256",
                                      claims={"jti": secrets.token_urlsafe(16)}, header={"kid": public["kid"]})
        return signed.decode() if isinstance(signed, bytes) else signed

    def pushed_with(audience):
        return requests.post(op.issuer + "/par", data={
            "response_type": "code", "redirect_uri": client.redirect_uri, "scope": "openid",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion(audience)}, timeout=TIMEOUT)

    # FAPI 2.0 §5.3.2.1: the issuer as audience; the PAR endpoint's own URL is taken too (RFC 9126 §2).
    for audience in (op.issuer, op.issuer + "/par"):
        r = pushed_with(audience)
        assert r.status_code == 201, r.text
    oauth_error(pushed_with("https://someone-else.example"), 401, "invalid_client")
    outcome = Browser(op).authorize(authorize_with(op, client.id, r.json()["request_uri"]), user)
    assert outcome.kind == "redirect" and outcome.code, outcome.describe()


def test_a_provider_that_requires_pushed_requests_refuses_plain_ones():
    with running_provider("--oidc-require-par", "1") as provider:
        assert provider.metadata["require_pushed_authorization_requests"] is True
        client, user = provider.register(), provider.user()
        state = secrets.token_urlsafe(8)
        plain = Browser(provider).authorize(provider.authorize_url(client, state=state), user)
        # The client and redirect URI are known: the refusal goes back there (RFC 6749 §4.1.2.1).
        assert plain.kind == "redirect" and plain.params["error"] == "invalid_request", plain.describe()
        assert plain.params["state"] == state and "pushed" in plain.params["error_description"]
        reference = push(provider, client).json()["request_uri"]
        outcome = Browser(provider).authorize(authorize_with(provider, client.id, reference), user)
        assert outcome.kind == "redirect" and outcome.code, outcome.describe()
