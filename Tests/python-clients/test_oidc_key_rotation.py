"""Signing-key rotation (`trifactord signing-keys rotate`) while tokens are live: relying parties keep
verifying what the old keys signed (the JWK Set keeps them published, OIDC Core §10.1.1) and new tokens
carry the new keys' kids. A rotation publishes the new keys at once and signs with them only after
`--activate-after` (120 s by default): every running instance re-reads the keys within 10 s, so none meets a
token signed by a key it does not publish. A second process on the same database reads the keys at once.
"""

import json
import time

from oidc_support import (Browser, header_of, key_set, op, refresh, sign_in_for_code,  # noqa: F401
                          redeem, tokens_for, verify_access_token, verify_id_token)


def test_after_a_signing_key_rotation_old_tokens_still_verify_and_new_ones_carry_the_new_kid(op):
    client = op.register()
    user = op.user(totp=False)
    before = tokens_for(op, client, user, scope="openid offline_access")
    old_access_kid = header_of(before["access_token"])["kid"]
    old_id_kid = header_of(before["id_token"])["kid"]

    # One instance and no cached key sets to wait for: the new keys may sign at once.
    rotated = json.loads(op.cli("signing-keys", "rotate", "--activate-after", "0", "--json"))
    new_kids = set(rotated["kids"])
    assert len(new_kids) == 2 and old_access_kid not in new_kids, rotated

    with op.instance() as fresh:
        published = {k["kid"] for k in op.jwks(fresh)["keys"]}
        assert {old_access_kid, old_id_kid} <= published, "the retired keys left the JWK Set"
        assert new_kids <= published, "the new keys are not published"
        jwks = key_set(op, fresh)

        # What the old key signed still verifies, and still opens UserInfo.
        verify_access_token(op, before["access_token"], jwks=jwks)
        verify_id_token(op, before["id_token"], client.id, jwks=jwks)
        assert op.userinfo(before["access_token"], base=fresh).status_code == 200

        # A refresh and a new sign-in get tokens signed by the new keys.
        r = refresh(op, client, before["refresh_token"], base=fresh)
        assert r.status_code == 200, r.text
        after = r.json()
        assert header_of(after["access_token"])["kid"] in new_kids, header_of(after["access_token"])
        verify_access_token(op, after["access_token"], jwks=jwks)

        nonce = "rotation-nonce"
        outcome = sign_in_for_code(op, Browser(op, fresh), client, user, scope="openid", nonce=nonce)
        r = redeem(op, client, outcome.code, base=fresh)
        assert r.status_code == 200, r.text
        id_token = r.json()["id_token"]
        assert header_of(id_token)["kid"] in new_kids, header_of(id_token)
        verify_id_token(op, id_token, client.id, nonce=nonce, jwks=jwks)


def test_every_instance_publishes_a_new_signing_key_before_any_instance_signs_with_it(op):
    # OIDC Core §10.1.1: a relying party that meets an unknown kid fetches jwks_uri again and must find the key
    # there. Behind a load balancer that fetch may land on any instance: each must publish the key first.
    client = op.register()
    user = op.user(totp=False)
    tokens_for(op, client, user)  # the running instance has loaded (and cached) its keys
    new_kids = set(json.loads(op.cli("signing-keys", "rotate", "--json"))["kids"])
    # Until the switch-over, every instance still signs with the old key, and the running one publishes the new
    # keys within its 10-second reload.
    deadline = time.monotonic() + 12
    while not new_kids <= {k["kid"] for k in op.jwks()["keys"]}:
        assert time.monotonic() < deadline, "the running instance did not publish the new keys within 12 s"
        time.sleep(0.5)
    assert header_of(tokens_for(op, client, user)["access_token"])["kid"] not in new_kids
    # An instance whose clock is past the switch-over (121 s) signs with the new key; the first one accepts it.
    with op.instance("--clock-offset", "121") as later:
        after = tokens_for(op, client, user, base=later)
        kid = header_of(after["access_token"])["kid"]
        assert kid in new_kids, header_of(after["access_token"])
        r = op.userinfo(after["access_token"])
        assert r.status_code == 200, (
            f"GET /userinfo on the first instance refused a token signed with the new key (kid {kid}): "
            f"{r.status_code} {r.headers.get('WWW-Authenticate')}")
