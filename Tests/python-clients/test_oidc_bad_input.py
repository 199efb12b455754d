"""Bad input to the authorization and token endpoints: each gets the error its spec prescribes, where the
spec says it goes (an error page when the redirect URI cannot be trusted, the redirect URI otherwise, a JSON
error at the token endpoint), and nothing is issued: no code, no tokens, no sign-in session.
"""

import secrets
import time
from urllib.parse import urlencode

import pytest
import requests
from authlib.oauth2.rfc7523 import private_key_jwt_sign

from oidc_support import (ec_key, CALLBACK, TIMEOUT, Browser, forms_of, oauth_error, op, pkce_pair,  # noqa: F401
                          redeem, sign_in_for_code)

HTTPS_CALLBACK = "https://rp.example.com/cb"


def _error_page(r: requests.Response):
    """An HTML error page (400), no redirect, no code."""
    assert r.status_code == 400, (r.status_code, r.headers, r.text[:300])
    assert "Location" not in r.headers, r.headers
    assert r.headers.get("Content-Type", "").startswith("text/html"), r.headers
    assert "code=" not in r.text


def _redirect_error(op, outcome, client, error, state=None):
    assert outcome.kind == "redirect", outcome.describe()
    assert outcome.location.startswith(client.redirect_uri + "?"), outcome.describe()
    assert outcome.params.get("error") == error, outcome.describe()
    assert "code" not in outcome.params, outcome.describe()
    assert outcome.params.get("iss") == op.issuer, outcome.describe()
    if state is not None:
        assert outcome.params.get("state") == state, outcome.describe()


@pytest.fixture(scope="module")
def web(op):
    """A confidential client with a loopback and an https redirect URI."""
    return op.register(redirect_uris=(CALLBACK, HTTPS_CALLBACK))


@pytest.mark.parametrize("redirect_uri", [
    CALLBACK + "/",                                 # trailing slash
    CALLBACK.replace("/callback", "/Callback"),     # different case in the path
    CALLBACK + "?extra=1",                          # extra query
    CALLBACK.replace("http://", "http://user@"),    # user@host
    CALLBACK + "#fragment",                         # fragment
    "https://rp.example.com:8443/cb",               # another port on a non-loopback host
    "https://RP.example.com/cb/..",                 # path tricks
    "http://rp.example.com/cb",                     # http instead of https
], ids=["trailing-slash", "path-case", "extra-query", "userinfo", "fragment", "other-port", "dot-segments", "http"])
def test_a_redirect_uri_that_differs_from_the_registered_one_gets_an_error_page_not_a_redirect(op, web, redirect_uri):
    # RFC 6749 §3.1.2.3, §4.1.2.1; RFC 9700 §4.1.3 (exact string matching)
    r = requests.get(op.authorize_url(web, redirect_uri=redirect_uri, state="s"), allow_redirects=False,
                     timeout=TIMEOUT)
    _error_page(r)


def test_a_loopback_redirect_uri_may_use_any_port(op, web):
    # RFC 8252 §7.3
    other_port = CALLBACK.replace(":8700/", ":9911/")
    outcome = Browser(op).authorize(op.authorize_url(web, redirect_uri=other_port, prompt="none", state="p"))
    assert outcome.kind == "redirect" and outcome.location.startswith(other_port + "?"), outcome.describe()


@pytest.mark.parametrize("params, why", [
    ({"client_id": None}, "no client_id"),
    ({"client_id": "no-such-client"}, "unknown client"),
    ({"redirect_uri": None}, "no redirect_uri"),
])
def test_an_unknown_client_or_missing_redirect_uri_gets_an_error_page(op, web, params, why):
    r = requests.get(op.authorize_url(web, **params), allow_redirects=False, timeout=TIMEOUT)
    _error_page(r)


def test_a_public_client_without_pkce_or_with_the_plain_method_is_sent_back_invalid_request(op):
    # RFC 7636 §4.4.1; RFC 9700 §2.1.1 (PKCE required of public clients, S256 only)
    public = op.register(auth_method="none")
    verifier, challenge = pkce_pair()
    browser = Browser(op)
    outcome = browser.authorize(op.authorize_url(public, state="a"))
    _redirect_error(op, outcome, public, "invalid_request", "a")
    outcome = browser.authorize(op.authorize_url(public, state="b", code_challenge=verifier[:43],
                                                 code_challenge_method="plain"))
    _redirect_error(op, outcome, public, "invalid_request", "b")
    outcome = browser.authorize(op.authorize_url(public, state="c", code_challenge=challenge))  # method left out
    _redirect_error(op, outcome, public, "invalid_request", "c")
    assert outcome.steps == [] and browser.cookie("tf_session") is None


def test_a_wrong_or_missing_code_verifier_gets_invalid_grant_and_no_tokens(op):
    # RFC 7636 §4.6
    public = op.register(auth_method="none")
    user = op.user(totp=False)
    verifier, challenge = pkce_pair()
    browser = Browser(op)
    outcome = sign_in_for_code(op, browser, public, user, code_challenge=challenge, code_challenge_method="S256")
    oauth_error(redeem(op, public, outcome.code, code_verifier=pkce_pair()[0]), 400, "invalid_grant")
    outcome = sign_in_for_code(op, browser, public, user, code_challenge=challenge, code_challenge_method="S256")
    oauth_error(redeem(op, public, outcome.code), 400, "invalid_grant")

    # RFC 9700 §4.8.2: a verifier for a request that had no challenge is a downgrade, refused too.
    confidential = op.register()
    outcome = sign_in_for_code(op, browser, confidential, user)
    oauth_error(redeem(op, confidential, outcome.code, code_verifier=verifier), 400, "invalid_grant")


def test_a_code_redeemed_by_another_client_or_with_another_redirect_uri_gets_invalid_grant(op, web):
    # RFC 6749 §4.1.3
    thief = op.register(redirect_uris=(CALLBACK,))
    user = op.user(totp=False)
    outcome = sign_in_for_code(op, Browser(op), web, user)
    oauth_error(redeem(op, thief, outcome.code), 400, "invalid_grant")
    r = op.token(web, {"grant_type": "authorization_code", "code": outcome.code, "redirect_uri": HTTPS_CALLBACK})
    oauth_error(r, 400, "invalid_grant")
    r = op.token(web, {"grant_type": "authorization_code", "code": outcome.code})
    oauth_error(r, 400, "invalid_grant")


def test_client_authentication_failures_are_401_invalid_client_and_two_methods_at_once_invalid_request(op, web):
    # RFC 6749 §2.3, §5.2
    data = {"grant_type": "authorization_code", "code": "x" * 43, "redirect_uri": CALLBACK}
    r = requests.post(op.issuer + "/token", data=data, auth=(web.id, "not-the-secret"), timeout=TIMEOUT)
    body = oauth_error(r, 401, "invalid_client")
    assert r.headers.get("WWW-Authenticate", "").startswith("Basic"), (r.headers, body)

    r = requests.post(op.issuer + "/token", data={**data, "client_id": web.id, "client_secret": "not-the-secret"},
                      timeout=TIMEOUT)
    oauth_error(r, 401, "invalid_client")

    # A confidential client that leaves its secret out is not a public client.
    r = requests.post(op.issuer + "/token", data={**data, "client_id": web.id}, timeout=TIMEOUT)
    oauth_error(r, 401, "invalid_client")

    r = requests.post(op.issuer + "/token", data={**data, "client_id": web.id, "client_secret": web.secret},
                      auth=(web.id, web.secret), timeout=TIMEOUT)
    oauth_error(r, 400, "invalid_request")

    # A public client cannot authenticate with a secret it does not have.
    public = op.register(auth_method="none")
    r = requests.post(op.issuer + "/token", data=data, auth=(public.id, "guess"), timeout=TIMEOUT)
    oauth_error(r, 401, "invalid_client")


def test_a_private_key_jwt_assertion_is_refused_when_replayed_foreign_or_for_another_audience(op):
    # RFC 7523 §3; OIDC Core §9 (jti used once)
    key = ec_key()
    public = {**key.as_dict(is_private=False), "kid": key.thumbprint(), "alg": "ES256", "use": "sig"}
    client = op.register(auth_method="private_key_jwt", jwks={"keys": [public]},
                         grants="client_credentials", scopes="reports:read")
    token_endpoint = op.url("token_endpoint")

    def call(assertion):
        return requests.post(token_endpoint, data={
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion}, timeout=TIMEOUT)

    def assertion(signing_key=key, audience=token_endpoint, **claims):
        signed = private_key_jwt_sign(signing_key, client.id, audience, alg="ES256",
                                      claims={"jti": secrets.token_urlsafe(16), **claims},
                                      header={"kid": public["kid"]})
        return signed.decode() if isinstance(signed, bytes) else signed

    good = assertion()
    assert call(good).status_code == 200
    oauth_error(call(good), 401, "invalid_client")  # the same jti again
    stranger = ec_key()
    oauth_error(call(assertion(signing_key=stranger)), 401, "invalid_client")
    oauth_error(call(assertion(audience="https://someone-else.example/token")), 401, "invalid_client")
    oauth_error(call(assertion(exp=int(time.time()) - 120)), 401, "invalid_client")


def test_an_expired_code_gets_invalid_grant(op, web):
    # RFC 6749 §4.1.2 (codes live 60 s here). Instead of waiting 61 s, the code is redeemed at a second
    # instance on the same database whose clock runs 61 s ahead (--clock-offset).
    outcome = sign_in_for_code(op, Browser(op), web, op.user(totp=False))
    with op.instance("--clock-offset", "61") as later:
        oauth_error(redeem(op, web, outcome.code, base=later), 400, "invalid_grant")
    # Not spent by the refused attempt: still good at the real time.
    assert redeem(op, web, outcome.code).status_code == 200


@pytest.mark.parametrize("name, value", [
    ("state", "s" * 2049),
    ("nonce", "n" * 2049),
    ("login_hint", "h" * 2049),
])
def test_an_oversized_parameter_is_sent_back_as_invalid_request(op, web, name, value):
    browser = Browser(op)
    outcome = browser.authorize(op.authorize_url(web, **{name: value}))
    _redirect_error(op, outcome, web, "invalid_request")
    assert outcome.steps == [] and browser.cookie("tf_session") is None


def test_a_password_post_with_a_wrong_csrf_token_ends_the_sign_in_without_a_session(op, web):
    user = op.user(totp=False)
    browser = Browser(op)
    r = browser.http.get(op.authorize_url(web, state="c"), allow_redirects=True, timeout=TIMEOUT)
    form = [f for f in forms_of(r.text).forms if f["action"].endswith("/authorize/sign-in")][0]
    r = browser.http.post(op.issuer + "/authorize/sign-in", data={**form["inputs"], "email": user.email},
                          allow_redirects=True, timeout=TIMEOUT)
    form = [f for f in forms_of(r.text).forms if f["action"].endswith("/authorize/password")][0]
    assert form["inputs"]["csrf"], form

    forged = {**form["inputs"], "csrf": "0" * len(form["inputs"]["csrf"]), "password": user.password}
    r = browser.http.post(op.issuer + "/authorize/password", data=forged, allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 400, (r.status_code, r.headers)
    assert "This sign-in has ended" in r.text, r.text[:400]
    assert "Location" not in r.headers
    assert "tf_session" not in r.headers.get("Set-Cookie", ""), r.headers
    assert browser.cookie("tf_session") is None

    # Without any csrf field, the same.
    r = browser.http.post(op.issuer + "/authorize/password",
                          data={"flow": form["inputs"]["flow"], "password": user.password},
                          allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 400 and browser.cookie("tf_session") is None, r.status_code


def test_a_flow_continued_in_another_browser_ends_there(op, web):
    # The flow id alone (e.g. a leaked link) does not let another browser finish the sign-in.
    user = op.user(totp=False)
    victim = Browser(op)
    r = victim.http.get(op.authorize_url(web, state="v"), allow_redirects=True, timeout=TIMEOUT)
    inputs = [f for f in forms_of(r.text).forms if f["action"].endswith("/authorize/sign-in")][0]["inputs"]
    attacker = Browser(op)
    attacker.http.get(op.authorize_url(web, state="a"), allow_redirects=True, timeout=TIMEOUT)  # its own cookie
    r = attacker.http.post(op.issuer + "/authorize/sign-in", data={**inputs, "email": user.email},
                           allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 400 and "This sign-in has ended" in r.text, (r.status_code, r.text[:300])


@pytest.mark.parametrize("name, error", [
    ("request", "request_not_supported"),
    ("request_uri", "request_uri_not_supported"),
])
def test_a_request_object_is_answered_not_supported_at_the_redirect_uri(op, web, name, error):
    # OIDC Core §6.1, §6.2, §3.1.2.6
    value = "eyJhbGciOiJub25lIn0.eyJzdGF0ZSI6InMifQ." if name == "request" else "https://rp.example.com/req.jwt"
    browser = Browser(op)
    outcome = browser.authorize(op.authorize_url(web, state="ro", **{name: value}))
    _redirect_error(op, outcome, web, error, "ro")
    assert outcome.steps == []


def test_a_repeated_parameter_is_invalid_request_at_both_endpoints(op, web):
    # RFC 6749 §3.1 and §3.2: parameters must not be included more than once.
    query = urlencode([("client_id", web.id), ("redirect_uri", CALLBACK), ("response_type", "code"),
                       ("scope", "openid"), ("scope", "openid email"), ("state", "rp")])
    browser = Browser(op)
    outcome = browser.authorize(op.issuer + "/authorize?" + query)
    _redirect_error(op, outcome, web, "invalid_request", "rp")
    assert outcome.steps == []

    r = requests.post(op.issuer + "/token", auth=(web.id, web.secret), timeout=TIMEOUT,
                      data=[("grant_type", "authorization_code"), ("code", "a" * 43), ("code", "b" * 43),
                            ("redirect_uri", CALLBACK)])
    oauth_error(r, 400, "invalid_request")


def test_an_unsupported_response_type_or_grant_type_is_refused(op, web):
    outcome = Browser(op).authorize(op.authorize_url(web, response_type="token", state="t"))
    _redirect_error(op, outcome, web, "unsupported_response_type", "t")
    oauth_error(op.token(web, {"grant_type": "password", "username": "a", "password": "b"}), 400,
                "unsupported_grant_type")
    oauth_error(op.token(web, {"grant_type": "authorization_code", "redirect_uri": CALLBACK}), 400,
                "invalid_request")
    r = requests.post(op.issuer + "/token", json={"grant_type": "client_credentials"}, auth=(web.id, web.secret),
                      timeout=TIMEOUT)
    oauth_error(r, 400, "invalid_request")
