"""Regression tests of a security review of the OpenID Provider: figures from a URL never overflow, a
self-registered client cannot make the issuer an open redirector, an assertion must name this server alone,
and an administrator ending a user's sessions ends what relying parties were given, offline grants included."""

import json
import re

import pytest
import requests

from oidc_support import TIMEOUT, Browser, oauth_error, op, refresh, running_provider, tokens_for  # noqa: F401


@pytest.fixture(scope="module")
def open_op():
    """A provider whose registration is open to anyone, as agent clients need."""
    with running_provider("--oidc-registration", "open") as provider:
        yield provider


def test_huge_figures_in_the_url_are_clamped_or_refused_and_the_server_keeps_serving(op):
    client = op.register(first_party=True)
    browser = Browser(op)
    r = browser.http.get(op.authorize_url(client, state="w"), allow_redirects=True, timeout=TIMEOUT)
    flow = re.search(r"flow=([\w-]{43})", r.url).group(1)
    for path in ("/authorize/password", "/authorize/second-factor"):
        r = browser.http.get(f"{op.issuer}{path}?flow={flow}&error=locked&wait=9223372036854775807&left=-9223372036854775808",
                             timeout=TIMEOUT)
        assert r.status_code < 500, (path, r.status_code)
    r = requests.get(op.authorize_url(client, state="m", max_age="9223372036854775807"), allow_redirects=False,
                     timeout=TIMEOUT)
    assert r.status_code == 303 and "error=invalid_request" in r.headers["Location"], r.headers
    assert requests.get(op.issuer + "/.well-known/openid-configuration", timeout=TIMEOUT).status_code == 200


def test_a_self_registered_clients_errors_and_logouts_are_a_link_the_user_follows_not_a_redirect(open_op):
    op = open_op
    registered = requests.post(op.issuer + "/register", json={
        "client_name": "Stranger", "redirect_uris": ["https://evil.example/x"],
        "post_logout_redirect_uris": ["https://evil.example/bye"], "token_endpoint_auth_method": "none"},
        timeout=TIMEOUT)
    assert registered.status_code == 201, registered.text
    client_id = registered.json()["client_id"]
    r = requests.get(f"{op.issuer}/authorize?client_id={client_id}&redirect_uri=https%3A%2F%2Fevil.example%2Fx"
                     "&response_type=code&scope=openid", allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 400 and "Location" not in r.headers and "Continue to evil.example" in r.text, r.text
    r = requests.get(f"{op.issuer}/authorize?client_id={client_id}&redirect_uri=https%3A%2F%2Fevil.example%2Fx"
                     "&response_type=code&scope=openid&code_challenge_method=S256&code_challenge=" + "a" * 43
                     + "&state=1&state=2", allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 400 and "Location" not in r.headers, (r.status_code, r.headers)
    r = requests.get(f"{op.issuer}/logout?client_id={client_id}&post_logout_redirect_uri=https%3A%2F%2Fevil.example%2Fbye",
                     allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 200 and "Location" not in r.headers and "Continue to evil.example" in r.text, r.text


def test_an_administrator_ending_a_users_sessions_ends_their_offline_grants_too(op):
    client = op.register(grants="authorization_code refresh_token")
    user = op.user(totp=False)
    tokens = tokens_for(op, client, user, scope="openid offline_access")
    sub = json.loads(__import__("base64").urlsafe_b64decode(tokens["id_token"].split(".")[1] + "=="))["sub"]
    key = json.loads(op.cli("admin-keys", "create", "--name", "review", "--role", "write", "--json"))["token"]
    r = requests.post(f"{op.issuer}/admin/v1/users/{sub}/revoke-sessions", headers={"Authorization": f"Bearer {key}"},
                      timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    oauth_error(refresh(op, client, tokens["refresh_token"]), 400, "invalid_grant")
    assert op.userinfo(tokens["access_token"]).status_code == 401
