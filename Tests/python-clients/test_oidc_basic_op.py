"""Checks ported from the OpenID Foundation's Basic OP conformance profile (oidcc-basic-certification-test-plan),
each driven through the hosted pages with a cookie-keeping browser: code reuse, redirect_uri mismatch,
prompt=login / prompt=none, max_age, id_token_hint, UserInfo with a revoked token, and unrequested claims.
"""

import time

import requests

from oidc_support import (ACR_PASSWORD, TIMEOUT, Browser, oauth_error, op, redeem,  # noqa: F401
                          sign_in_for_code, verify_id_token)


def _tokens(op, client, outcome, **extra):
    r = redeem(op, client, outcome.code, **extra)
    assert r.status_code == 200, r.text
    return r.json()


def test_a_code_used_twice_is_refused_and_the_tokens_of_its_first_use_stop_working(op):
    # oidcc-codereuse-30seconds (RFC 6749 §4.1.2, §10.5)
    client = op.register()
    outcome = sign_in_for_code(op, Browser(op), client, op.user(totp=False), scope="openid offline_access")
    first = _tokens(op, client, outcome)
    assert op.userinfo(first["access_token"]).status_code == 200

    oauth_error(redeem(op, client, outcome.code), 400, "invalid_grant")
    r = op.userinfo(first["access_token"])
    assert r.status_code == 401, f"the first access token still works after the code was reused: {r.text}"
    oauth_error(op.token(client, {"grant_type": "refresh_token", "refresh_token": first["refresh_token"]}),
                400, "invalid_grant")


def test_a_redirect_uri_that_is_not_registered_gets_an_error_page_and_no_redirect(op):
    # oidcc-ensure-registered-redirect-uri (RFC 6749 §4.1.2.1, §3.1.2.4)
    client = op.register()
    r = requests.get(op.authorize_url(client, redirect_uri="http://127.0.0.1:8700/elsewhere", state="s"),
                     allow_redirects=False, timeout=TIMEOUT)
    assert r.status_code == 400, (r.status_code, r.headers)
    assert "Location" not in r.headers, r.headers
    assert r.headers.get("Content-Type", "").startswith("text/html"), r.headers
    assert "elsewhere" not in r.text  # the page does not link back to the unregistered address


def test_prompt_login_asks_for_the_password_again_despite_the_single_sign_on_session(op):
    # oidcc-prompt-login (OIDC Core §3.1.2.1)
    client = op.register()
    user = op.user(totp=False)
    browser = Browser(op)
    first = sign_in_for_code(op, browser, client, user)
    first_auth_time = verify_id_token(op, _tokens(op, client, first)["id_token"], client.id)["auth_time"]

    # With the session, a plain request comes straight back.
    silent = sign_in_for_code(op, browser, client, user)
    assert silent.steps == [], silent.describe()

    time.sleep(1.1)
    again = sign_in_for_code(op, browser, client, user, prompt="login")
    assert "password" in again.steps, again.describe()
    claims = verify_id_token(op, _tokens(op, client, again)["id_token"], client.id)
    assert claims["auth_time"] > first_auth_time, (claims["auth_time"], first_auth_time)


def test_max_age_older_than_the_sign_in_forces_a_new_sign_in_and_the_id_token_has_auth_time(op):
    # oidcc-max-age-1 and oidcc-max-age-10000 (OIDC Core §3.1.2.1, §2 auth_time)
    client = op.register()
    user = op.user(totp=False)
    browser = Browser(op)
    first = sign_in_for_code(op, browser, client, user)
    _tokens(op, client, first)

    recent = sign_in_for_code(op, browser, client, user, max_age="10000", nonce="n-10000")
    assert recent.steps == [], recent.describe()
    claims = verify_id_token(op, _tokens(op, client, recent)["id_token"], client.id, nonce="n-10000",
                             max_age=10000)
    assert isinstance(claims.get("auth_time"), int), claims
    signed_in_at = claims["auth_time"]

    time.sleep(1.1)
    stale = sign_in_for_code(op, browser, client, user, max_age="1", nonce="n-1")
    assert "password" in stale.steps, stale.describe()
    claims = verify_id_token(op, _tokens(op, client, stale)["id_token"], client.id, nonce="n-1", max_age=1)
    assert claims["nonce"] == "n-1"
    assert claims["auth_time"] > signed_in_at, (claims["auth_time"], signed_in_at)
    assert claims["acr"] == ACR_PASSWORD, claims


def test_prompt_none_without_a_session_sends_login_required_back_to_the_client(op):
    # oidcc-prompt-none-not-logged-in (OIDC Core §3.1.2.6)
    client = op.register()
    outcome = Browser(op).authorize(op.authorize_url(client, prompt="none", state="st-none"))
    assert outcome.kind == "redirect" and outcome.steps == [], outcome.describe()
    assert outcome.location.startswith(client.redirect_uri + "?"), outcome.describe()
    assert outcome.params.get("error") == "login_required", outcome.describe()
    assert outcome.params.get("state") == "st-none" and outcome.params.get("iss") == op.issuer, outcome.describe()
    assert "code" not in outcome.params, outcome.describe()


def test_prompt_none_with_a_session_and_earlier_consent_returns_a_code_without_any_page(op):
    # oidcc-prompt-none-logged-in
    client, unconsented = op.register(), op.register()
    user = op.user(totp=False)
    browser = Browser(op)
    sign_in_for_code(op, browser, client, user)
    silent = sign_in_for_code(op, browser, client, user, prompt="none", nonce="quiet")
    assert silent.steps == [], silent.describe()
    claims = verify_id_token(op, _tokens(op, client, silent)["id_token"], client.id, nonce="quiet")
    assert claims["nonce"] == "quiet"

    # The user never agreed to the other client: consent_required, no page.
    outcome = browser.authorize(op.authorize_url(unconsented, prompt="none", state="x"))
    assert outcome.kind == "redirect" and outcome.params.get("error") == "consent_required", outcome.describe()


def test_an_id_token_hint_issued_to_another_client_is_refused_with_invalid_request(op):
    # oidcc-id-token-hint (OIDC Core §3.1.2.1 id_token_hint)
    client, other = op.register(), op.register()
    user = op.user(totp=False)
    browser = Browser(op)
    others = _tokens(op, other, sign_in_for_code(op, browser, other, user))
    outcome = browser.authorize(op.authorize_url(client, id_token_hint=others["id_token"], state="h"))
    assert outcome.kind == "redirect" and outcome.steps == [], outcome.describe()
    assert outcome.params.get("error") == "invalid_request", outcome.describe()
    assert outcome.params.get("state") == "h" and "code" not in outcome.params, outcome.describe()

    # Its own ID token, for the signed-in user, is a valid hint for prompt=none.
    mine = _tokens(op, client, sign_in_for_code(op, browser, client, user))
    hinted = sign_in_for_code(op, browser, client, user, prompt="none", id_token_hint=mine["id_token"])
    assert hinted.steps == [], hinted.describe()


def test_userinfo_refuses_a_revoked_access_token(op):
    # oidcc-userinfo-* with RFC 7009 revocation
    client = op.register()
    tokens = _tokens(op, client, sign_in_for_code(op, Browser(op), client, op.user(totp=False)))
    assert op.post(client, "/revoke", {"token": tokens["access_token"]}).status_code == 200
    r = op.userinfo(tokens["access_token"])
    assert r.status_code == 401 and 'error="invalid_token"' in r.headers.get("WWW-Authenticate", ""), \
        (r.status_code, r.headers)


def test_claims_that_were_not_requested_are_absent(op):
    # oidcc-scope-* negative half (OIDC Core §5.4): scope=openid releases only sub.
    client = op.register()
    tokens = _tokens(op, client, sign_in_for_code(op, Browser(op), client, op.user(totp=False), scope="openid"))
    info = op.userinfo(tokens["access_token"]).json()
    assert set(info) == {"sub"}, info
    claims = verify_id_token(op, tokens["id_token"], client.id)
    assert not {"email", "email_verified", "name", "preferred_username", "phone_number"} & set(claims), claims


def test_form_post_response_mode_returns_the_code_in_an_auto_submitting_form(op):
    # oidcc-response-mode-form-post (OAuth 2.0 Form Post Response Mode §2)
    client = op.register()
    outcome = Browser(op).authorize(op.authorize_url(client, response_mode="form_post", state="fp"),
                                    op.user(totp=False))
    assert outcome.kind == "form_post" and outcome.location == client.redirect_uri, outcome.describe()
    assert outcome.params.get("state") == "fp" and outcome.params.get("iss") == op.issuer, outcome.describe()
    assert outcome.params.get("code"), outcome.describe()
    _tokens(op, client, outcome)


def test_a_user_who_denies_consent_sends_access_denied_back_and_nothing_is_issued(op):
    client = op.register()
    outcome = Browser(op).authorize(op.authorize_url(client, state="d"), op.user(totp=False), consent="deny")
    assert outcome.steps[-1] == "consent", outcome.describe()
    assert outcome.kind == "redirect" and outcome.params.get("error") == "access_denied", outcome.describe()
    assert "code" not in outcome.params and outcome.params.get("state") == "d", outcome.describe()


def test_the_authorization_endpoint_accepts_post(op):
    # OIDC Core §3.1.2.1: GET and POST.
    client = op.register()
    params = {"client_id": client.id, "redirect_uri": client.redirect_uri, "response_type": "code",
              "scope": "openid", "state": "post-state"}
    outcome = Browser(op).authorize(op.issuer + "/authorize", op.user(totp=False), method="POST", data=params)
    assert outcome.kind == "redirect" and outcome.code and outcome.params["state"] == "post-state", \
        outcome.describe()
    _tokens(op, client, outcome)
