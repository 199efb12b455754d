"""DPoP (RFC 9449) against a real provider on loopback, the proofs made by joserfc (a second JOSE library, not
the provider's): tokens bound to the client's key (`token_type: DPoP`, `cnf.jkt`), refused as bearer tokens,
refreshed only with the same key, codes bound by `dpop_jkt` or by a proof sent with the pushed request, and the
server's nonces. Ported from the FAPI 2.0 test plan's DPoP checks: a proof with the wrong `htu`, `htm` or `iat`,
a reused `jti`, another key, a private key in the header, `alg: none` and a missing `ath` are each refused with
`invalid_dpop_proof`."""
import base64
import hashlib
import json
import secrets
import time
from urllib.parse import urlencode

import requests
from joserfc import jwk, jwt

from oidc_support import (TIMEOUT, Browser, oauth_error, op, pkce_pair, redeem, running_provider,  # noqa: F401
                          sign_in_for_code, verify_access_token)


def full_length_ec_key():
    """A P-256 key whose JWK has 32-byte coordinates, as RFC 7518 §6.2.1.2 requires (and the server insists on):
    joserfc 1.0 drops a coordinate's leading zero bytes, about once in 64 keys."""
    while True:
        key = jwk.ECKey.generate_key("P-256")
        public = key.as_dict(private=False)
        if len(public["x"]) == 43 and len(public["y"]) == 43:
            return key


class Holder:
    """A client's DPoP key and the proofs it makes (RFC 9449 §4.2)."""

    def __init__(self, kind="EC"):
        self.key = full_length_ec_key() if kind == "EC" else jwk.RSAKey.generate_key(2048)
        self.alg = "ES256" if kind == "EC" else "RS256"

    @property
    def thumbprint(self):
        return self.key.thumbprint()

    def proof(self, method, url, token=None, nonce=None, iat=None, jti=None, header=None, claims=None):
        body = {"jti": jti or secrets.token_urlsafe(16), "htm": method, "htu": url, "iat": int(iat or time.time())}
        if token is not None:
            body["ath"] = base64.urlsafe_b64encode(hashlib.sha256(token.encode()).digest()).rstrip(b"=").decode()
        if nonce is not None:
            body["nonce"] = nonce
        body.update(claims or {})
        protected = {"typ": "dpop+jwt", "alg": self.alg, "jwk": self.key.as_dict(private=False), **(header or {})}
        return jwt.encode(protected, body, self.key)


def token_request(op, client, data, proof=None):
    headers = {"DPoP": proof} if proof else {}
    auth = (client.id, client.secret) if client.secret else None
    if not client.secret:
        data = {**data, "client_id": client.id}
    return requests.post(op.issuer + "/token", data=data, auth=auth, headers=headers, timeout=TIMEOUT)


def code_for(op, client, user, **params):
    return sign_in_for_code(op, Browser(op), client, user, **params).code


def userinfo(op, token, proof=None, scheme="DPoP"):
    headers = {"Authorization": f"{scheme} {token}"}
    if proof:
        headers["DPoP"] = proof
    return requests.get(op.issuer + "/userinfo", headers=headers, timeout=TIMEOUT)


def test_discovery_names_the_proof_algorithms(op):
    assert op.metadata["dpop_signing_alg_values_supported"] == ["ES256", "EdDSA", "PS256", "RS256"]


def test_a_bound_token_is_used_only_with_a_proof_of_its_key(op):
    client, user, holder = op.register(), op.user(), Holder()
    token_url = op.issuer + "/token"
    r = token_request(op, client, {"grant_type": "authorization_code", "code": code_for(op, client, user),
                                   "redirect_uri": client.redirect_uri}, holder.proof("POST", token_url))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["token_type"] == "DPoP", body
    access = body["access_token"]
    claims = verify_access_token(op, access)
    assert claims["cnf"] == {"jkt": holder.thumbprint}
    info_url = op.issuer + "/userinfo"
    r = userinfo(op, access, holder.proof("GET", info_url, token=access))
    assert r.status_code == 200 and r.json()["sub"], r.text
    # §7.1: never as a bearer token (in the header or a form body); never without a proof, or with another key's.
    form = requests.post(info_url, data={"access_token": access}, timeout=TIMEOUT)
    for refused, error in ((userinfo(op, access, scheme="Bearer"), "invalid_token"), (form, "invalid_token"),
                           (userinfo(op, access), "invalid_token"),
                           (userinfo(op, access, Holder().proof("GET", info_url, token=access)), "invalid_dpop_proof")):
        assert refused.status_code == 401, refused.text
        assert refused.headers["WWW-Authenticate"].startswith(f'DPoP error="{error}", algs="ES256 EdDSA PS256 RS256"'), \
            refused.headers
    # Without any token, both schemes are offered.
    bare = requests.get(info_url, timeout=TIMEOUT)
    assert bare.status_code == 401 and bare.headers["WWW-Authenticate"] == 'Bearer, DPoP algs="ES256 EdDSA PS256 RS256"'
    # A bearer token in the DPoP scheme is refused in that scheme.
    plain = redeem(op, client, code_for(op, client, user)).json()["access_token"]
    r = userinfo(op, plain, holder.proof("GET", info_url, token=plain))
    assert r.status_code == 401 and r.headers["WWW-Authenticate"].startswith('DPoP error="invalid_token"')
    # Introspection tells a resource server the binding (§6.2).
    r = op.post(client, "/introspect", {"token": access})
    assert r.json()["active"] is True and r.json()["token_type"] == "DPoP" and r.json()["cnf"]["jkt"] == holder.thumbprint


def test_proofs_that_do_not_hold_are_invalid_dpop_proof(op):
    client, holder = op.register(grants="client_credentials", scopes="reports:read"), Holder()
    url = op.issuer + "/token"

    def with_proof(proof):
        return token_request(op, client, {"grant_type": "client_credentials"}, proof)

    assert with_proof(holder.proof("POST", url)).status_code == 200
    reused = holder.proof("POST", url)
    assert with_proof(reused).status_code == 200
    refused = {
        "a reused jti": reused,
        "the wrong htu": holder.proof("POST", op.issuer + "/userinfo"),
        "the wrong htm": holder.proof("GET", url),
        "an iat two minutes old": holder.proof("POST", url, iat=time.time() - 120),
        "an iat a minute ahead": holder.proof("POST", url, iat=time.time() + 60),
        "another typ": holder.proof("POST", url, header={"typ": "JWT"}),
        "a private key in the header": holder.proof("POST", url, header={"jwk": holder.key.as_dict(private=True)}),
        "a signature by another key": Holder().proof("POST", url, header={"jwk": holder.key.as_dict(private=False)}),
        "no jti": holder.proof("POST", url, claims={"jti": None}),
    }
    refused["not a JWT"] = "not-a-jwt"
    for what, proof in refused.items():
        body = oauth_error(with_proof(proof), 400, "invalid_dpop_proof")
        assert body["error_description"], what
    # alg none (an empty signature, which joserfc will not make) and HS256 (a symmetric key), each with a good
    # public jwk, are refused for their alg.
    public = json.dumps(holder.key.as_dict(private=False)).encode()
    claims = b'{"jti":"%s","htm":"POST","htu":"%s","iat":%d}' % (secrets.token_urlsafe(8).encode(), url.encode(),
                                                                 int(time.time()))
    unsigned = ".".join(base64.urlsafe_b64encode(part).rstrip(b"=").decode() for part in (
        b'{"typ":"dpop+jwt","alg":"none","jwk":' + public + b"}", claims)) + "."
    secret = jwk.OctKey.generate_key(256)
    symmetric = jwt.encode({"typ": "dpop+jwt", "alg": "HS256", "jwk": holder.key.as_dict(private=False)},
                           {"jti": secrets.token_urlsafe(8), "htm": "POST", "htu": url, "iat": int(time.time())},
                           secret)
    for proof in (unsigned, symmetric):
        body = oauth_error(with_proof(proof), 400, "invalid_dpop_proof")
        assert "alg must be one of" in body["error_description"], body
    # The URL as RFC 3986 §6.2 normalizes it, without query or fragment, is the same URL.
    loose = "HTTP://" + url.removeprefix("http://") + "?ignored=1#frag"
    assert with_proof(holder.proof("POST", loose)).status_code == 200
    # Two DPoP headers, each a good proof (§4.3 1: one only), over a raw connection that sends both.
    import http.client
    from urllib.parse import urlsplit
    target = urlsplit(url)
    connection = http.client.HTTPConnection(target.hostname, target.port, timeout=TIMEOUT)
    connection.putrequest("POST", "/token")
    body = "grant_type=client_credentials"
    credentials = base64.b64encode(f"{client.id}:{client.secret}".encode()).decode()
    for header, value in (("Content-Type", "application/x-www-form-urlencoded"), ("Authorization", f"Basic {credentials}"),
                          ("DPoP", holder.proof("POST", url)), ("DPoP", holder.proof("POST", url)),
                          ("Content-Length", str(len(body)))):
        connection.putheader(header, value)
    connection.endheaders(body.encode())
    answer = connection.getresponse()
    assert answer.status == 400 and b"invalid_dpop_proof" in answer.read()


def test_a_public_clients_refresh_token_needs_the_same_key_and_ath_binds_the_token(op):
    # RFC 9449 §5: a public client's refresh token is bound to the key; a confidential client's is not (below).
    client, user, holder = op.register(auth_method="none", grants="authorization_code refresh_token",
                                       scopes="openid offline_access"), op.user(), Holder()
    url = op.issuer + "/token"
    verifier, challenge = pkce_pair()
    first = token_request(op, client, {"grant_type": "authorization_code", "code_verifier": verifier,
                                       "code": code_for(op, client, user, scope="openid offline_access",
                                                        code_challenge=challenge, code_challenge_method="S256"),
                                       "redirect_uri": client.redirect_uri}, holder.proof("POST", url)).json()
    refresh = first["refresh_token"]
    oauth_error(token_request(op, client, {"grant_type": "refresh_token", "refresh_token": refresh}),
                400, "invalid_dpop_proof")
    oauth_error(token_request(op, client, {"grant_type": "refresh_token", "refresh_token": refresh},
                              Holder().proof("POST", url)), 400, "invalid_dpop_proof")
    r = token_request(op, client, {"grant_type": "refresh_token", "refresh_token": refresh}, holder.proof("POST", url))
    assert r.status_code == 200 and r.json()["token_type"] == "DPoP", r.text
    access = r.json()["access_token"]
    assert verify_access_token(op, access)["cnf"]["jkt"] == holder.thumbprint
    # ath: a proof made for another token does not carry this one.
    info = op.issuer + "/userinfo"
    assert userinfo(op, access, holder.proof("GET", info, token=first["access_token"])).status_code == 401
    assert userinfo(op, access, holder.proof("GET", info)).status_code == 401
    assert userinfo(op, access, holder.proof("GET", info, token=access)).status_code == 200


def test_refresh_tokens_of_confidential_clients_follow_the_proof_and_a_public_client_binds_at_first_use(op):
    url = op.issuer + "/token"
    confidential, user = op.register(grants="authorization_code refresh_token", scopes="openid offline_access"), \
        op.user()
    first = token_request(op, confidential, {"grant_type": "authorization_code", "redirect_uri": confidential.redirect_uri,
                                             "code": code_for(op, confidential, user, scope="openid offline_access")},
                          Holder().proof("POST", url)).json()
    # Constrained by the client's own authentication: a new key (rotated by the client) is taken, and binds the
    # new access token; no proof gives a bearer token.
    new_key = Holder()
    r = token_request(op, confidential, {"grant_type": "refresh_token", "refresh_token": first["refresh_token"]},
                      new_key.proof("POST", url))
    assert r.status_code == 200 and verify_access_token(op, r.json()["access_token"])["cnf"]["jkt"] == new_key.thumbprint
    r = token_request(op, confidential, {"grant_type": "refresh_token", "refresh_token": r.json()["refresh_token"]})
    assert r.status_code == 200 and r.json()["token_type"] == "Bearer", r.text
    # A public client that brings its first proof at a refresh binds its refresh token from then on.
    public = op.register(auth_method="none", grants="authorization_code refresh_token", scopes="openid offline_access")
    verifier, challenge = pkce_pair()
    tokens = token_request(op, public, {"grant_type": "authorization_code", "code_verifier": verifier,
                                        "redirect_uri": public.redirect_uri,
                                        "code": code_for(op, public, user, scope="openid offline_access",
                                                         code_challenge=challenge, code_challenge_method="S256")}).json()
    assert tokens["token_type"] == "Bearer"
    holder = Holder()
    r = token_request(op, public, {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
                      holder.proof("POST", url))
    assert r.status_code == 200 and r.json()["token_type"] == "DPoP", r.text
    oauth_error(token_request(op, public, {"grant_type": "refresh_token", "refresh_token": r.json()["refresh_token"]}),
                400, "invalid_dpop_proof")


def test_a_code_bound_by_dpop_jkt_or_by_a_proof_at_the_push(op):
    client, user, holder = op.register(), op.user(), Holder()
    url = op.issuer + "/token"
    code = code_for(op, client, user, dpop_jkt=holder.thumbprint)
    data = {"grant_type": "authorization_code", "code": code, "redirect_uri": client.redirect_uri}
    oauth_error(token_request(op, client, data, Holder().proof("POST", url)), 400, "invalid_dpop_proof")
    assert token_request(op, client, data, holder.proof("POST", url)).status_code == 200
    # A proof sent with the pushed request binds its code the same way (§10.1).
    r = requests.post(op.issuer + "/par", auth=(client.id, client.secret), timeout=TIMEOUT,
                      headers={"DPoP": holder.proof("POST", op.issuer + "/par")},
                      data={"response_type": "code", "redirect_uri": client.redirect_uri, "scope": "openid"})
    assert r.status_code == 201, r.text
    outcome = Browser(op).authorize(op.issuer + "/authorize?" + urlencode(
        {"client_id": client.id, "request_uri": r.json()["request_uri"]}), user)
    data = {"grant_type": "authorization_code", "code": outcome.code, "redirect_uri": client.redirect_uri}
    oauth_error(token_request(op, client, data), 400, "invalid_dpop_proof")
    assert token_request(op, client, data, holder.proof("POST", url)).json()["token_type"] == "DPoP"
    oauth_error(push_with(op, client, holder, dpop_jkt=Holder().thumbprint), 400, "invalid_dpop_proof")


def push_with(op, client, holder, **params):
    return requests.post(op.issuer + "/par", auth=(client.id, client.secret), timeout=TIMEOUT,
                         headers={"DPoP": holder.proof("POST", op.issuer + "/par")},
                         data={"response_type": "code", "redirect_uri": client.redirect_uri, "scope": "openid", **params})


def test_an_rsa_key_binds_as_well(op):
    client, holder = op.register(grants="client_credentials", scopes="reports:read"), Holder("RSA")
    r = token_request(op, client, {"grant_type": "client_credentials"}, holder.proof("POST", op.issuer + "/token"))
    assert r.status_code == 200 and verify_access_token(op, r.json()["access_token"])["cnf"]["jkt"] == holder.thumbprint


def test_server_nonces_when_the_operator_asks_for_them():
    with running_provider("--oidc-dpop-nonce", "1") as provider:
        client, holder = provider.register(grants="client_credentials", scopes="reports:read"), Holder()
        url = provider.issuer + "/token"
        r = token_request(provider, client, {"grant_type": "client_credentials"}, holder.proof("POST", url))
        oauth_error(r, 400, "use_dpop_nonce")
        nonce = r.headers["DPoP-Nonce"]
        r = token_request(provider, client, {"grant_type": "client_credentials"}, holder.proof("POST", url, nonce=nonce))
        assert r.status_code == 200 and r.json()["token_type"] == "DPoP", r.text
        assert r.headers.get("DPoP-Nonce"), r.headers  # the next one rides along (§8.2)
        oauth_error(token_request(provider, client, {"grant_type": "client_credentials"},
                                  holder.proof("POST", url, nonce="0." + "A" * 22)), 400, "use_dpop_nonce")
        # At the resource: 401 with the nonce in DPoP-Nonce.
        user = provider.user()
        web = provider.register()
        bound = token_request(provider, web, {"grant_type": "authorization_code", "code": code_for(provider, web, user),
                                              "redirect_uri": web.redirect_uri},
                              holder.proof("POST", url, nonce=nonce)).json()["access_token"]
        info = provider.issuer + "/userinfo"
        r = userinfo(provider, bound, holder.proof("GET", info, token=bound))
        assert r.status_code == 401 and 'error="use_dpop_nonce"' in r.headers["WWW-Authenticate"], r.headers
        r = userinfo(provider, bound, holder.proof("GET", info, token=bound, nonce=r.headers["DPoP-Nonce"]))
        assert r.status_code == 200, r.text
