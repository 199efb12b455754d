"""What a relying party and its resource servers do with Trifactor's tokens after the sign-in:
refresh with rotation and reuse detection (RFC 9700 §4.14.2), revocation (RFC 7009), introspection
(RFC 7662) and UserInfo (OIDC Core §5.3) with the claims each scope releases (§5.4).
"""

import requests

from oidc_support import TIMEOUT, oauth_error, op, refresh, tokens_for, verify_access_token  # noqa: F401


def _bearer_error(r, error):
    assert r.status_code == 401, f"expected 401 {error}, got {r.status_code} {r.text}"
    challenge = r.headers.get("WWW-Authenticate", "")
    assert challenge.startswith("Bearer") and f'error="{error}"' in challenge, challenge


def test_each_refresh_hands_out_a_new_refresh_token_and_reusing_a_spent_one_ends_the_whole_family(op):
    client = op.register()
    user = op.user(totp=False)
    first = tokens_for(op, client, user, scope="openid offline_access")
    spent = first["refresh_token"]

    r = refresh(op, client, spent)
    assert r.status_code == 200, r.text
    second = r.json()
    assert second["refresh_token"] and second["refresh_token"] != spent, second
    assert second["access_token"] != first["access_token"], second
    verify_access_token(op, second["access_token"])

    r = refresh(op, client, second["refresh_token"])
    assert r.status_code == 200, r.text
    newest = r.json()
    assert newest["refresh_token"] not in (spent, second["refresh_token"]), newest
    assert op.userinfo(newest["access_token"]).status_code == 200

    # An attacker (or a confused client) replays the first, spent refresh token.
    oauth_error(refresh(op, client, spent), 400, "invalid_grant")
    # The family is over: the legitimate newest refresh token is refused too, and its access token is dead.
    oauth_error(refresh(op, client, newest["refresh_token"]), 400, "invalid_grant")
    _bearer_error(op.userinfo(newest["access_token"]), "invalid_token")
    r = op.post(client, "/introspect", {"token": newest["refresh_token"]})
    assert r.status_code == 200 and r.json() == {"active": False}, r.text


def test_a_refresh_token_belongs_to_its_client_and_may_only_narrow_the_scope(op):
    client, other = op.register(), op.register()
    user = op.user(totp=False)
    tokens = tokens_for(op, client, user, scope="openid email offline_access")
    oauth_error(refresh(op, other, tokens["refresh_token"]), 400, "invalid_grant")
    r = op.token(client, {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
                          "scope": "openid email profile"})
    oauth_error(r, 400, "invalid_scope")
    r = op.token(client, {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
                          "scope": "openid"})
    assert r.status_code == 200, r.text
    assert r.json()["scope"] == "openid", r.json()
    assert "email" not in op.userinfo(r.json()["access_token"]).json()


def test_a_revoked_access_token_is_refused_by_userinfo_and_reported_inactive(op):
    client = op.register()
    user = op.user(totp=False)
    tokens = tokens_for(op, client, user, scope="openid offline_access")
    access = tokens["access_token"]
    assert op.userinfo(access).status_code == 200

    r = op.post(client, "/revoke", {"token": access, "token_type_hint": "access_token"})
    assert r.status_code == 200, r.text
    _bearer_error(op.userinfo(access), "invalid_token")
    r = op.post(client, "/introspect", {"token": access})
    assert r.status_code == 200 and r.json() == {"active": False}, r.text

    # RFC 7009 §2.2: an unknown or already revoked token is answered 200 too.
    assert op.post(client, "/revoke", {"token": access}).status_code == 200
    assert op.post(client, "/revoke", {"token": "no-such-token"}).status_code == 200


def test_revoking_a_refresh_token_ends_its_grant_and_the_access_tokens_it_gave(op):
    client = op.register()
    user = op.user(totp=False)
    tokens = tokens_for(op, client, user, scope="openid offline_access")

    r = op.post(client, "/revoke", {"token": tokens["refresh_token"], "token_type_hint": "refresh_token"})
    assert r.status_code == 200, r.text
    oauth_error(refresh(op, client, tokens["refresh_token"]), 400, "invalid_grant")
    r = op.post(client, "/introspect", {"token": tokens["refresh_token"]})
    assert r.status_code == 200 and r.json() == {"active": False}, r.text
    # RFC 7009 §2.1: the access tokens of the same grant go with it.
    _bearer_error(op.userinfo(tokens["access_token"]), "invalid_token")


def test_another_client_cannot_revoke_a_clients_tokens(op):
    client, other = op.register(), op.register()
    user = op.user(totp=False)
    tokens = tokens_for(op, client, user, scope="openid offline_access")
    for token in (tokens["access_token"], tokens["refresh_token"]):
        assert op.post(other, "/revoke", {"token": token}).status_code == 200
    assert op.userinfo(tokens["access_token"]).status_code == 200
    assert refresh(op, client, tokens["refresh_token"]).status_code == 200


def test_introspection_describes_live_access_and_refresh_tokens_to_confidential_clients(op):
    client = op.register()
    user = op.user(totp=False)
    tokens = tokens_for(op, client, user, scope="openid email offline_access")
    sub = op.userinfo(tokens["access_token"]).json()["sub"]

    r = op.post(client, "/introspect", {"token": tokens["access_token"]})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["active"] is True, body
    assert body["sub"] == sub and body["client_id"] == client.id, body
    assert set(body["scope"].split()) == {"openid", "email", "offline_access"}, body
    assert body["exp"] > body["iat"], body

    r = op.post(client, "/introspect", {"token": tokens["refresh_token"], "token_type_hint": "refresh_token"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["active"] is True, body
    assert body["sub"] == sub and body["client_id"] == client.id, body
    assert set(body["scope"].split()) == {"openid", "email", "offline_access"}, body

    # A public client may not introspect; a wrong secret gets 401 invalid_client.
    public = op.register(auth_method="none")
    oauth_error(op.post(public, "/introspect", {"token": tokens["access_token"]}), 401, "invalid_client")
    r = requests.post(op.issuer + "/introspect", data={"token": tokens["access_token"]},
                      auth=(client.id, "wrong-secret"), timeout=TIMEOUT)
    oauth_error(r, 401, "invalid_client")
    assert r.headers.get("WWW-Authenticate", "").startswith("Basic"), r.headers


def test_userinfo_answers_get_with_a_bearer_header_and_post_with_a_form_token_releasing_claims_by_scope(op):
    client = op.register()
    user = op.user(totp=False)
    tokens = tokens_for(op, client, user, scope="openid email profile")
    access = tokens["access_token"]

    r = requests.get(op.issuer + "/userinfo", headers={"Authorization": f"Bearer {access}"}, timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"].startswith("application/json"), r.headers
    got = r.json()
    assert got["email"] == user.email and got["email_verified"] is True, got
    assert got["name"] == "OIDC Tester" and got["preferred_username"] == user.email, got

    r = requests.post(op.issuer + "/userinfo", data={"access_token": access}, timeout=TIMEOUT)
    assert r.status_code == 200, r.text
    assert r.json() == got

    # Without the email scope no email is released.
    plain = tokens_for(op, client, op.user(totp=False), scope="openid profile")
    got = op.userinfo(plain["access_token"]).json()
    assert "email" not in got and "email_verified" not in got, got
    assert got.get("name") == "OIDC Tester", got

    # RFC 6750 §3.1: no token → a bare challenge; a garbled one → invalid_token; no openid scope → 403.
    r = requests.get(op.issuer + "/userinfo", timeout=TIMEOUT)
    assert r.status_code == 401 and r.headers.get("WWW-Authenticate", "").startswith("Bearer"), r.headers
    _bearer_error(op.userinfo(access[:-4] + "AAAA"), "invalid_token")
    machine = op.register(grants="client_credentials", scopes="reports:read")
    cc = op.token(machine, {"grant_type": "client_credentials"}).json()
    r = op.userinfo(cc["access_token"])
    assert r.status_code == 403 and 'error="insufficient_scope"' in r.headers.get("WWW-Authenticate", ""), \
        (r.status_code, r.headers)
