#!/usr/bin/env python3
"""Authorization-code flows per second, for bench/dpop.sh: a signed-in browser comes back for a code, and its
relying party exchanges it. Two kinds, each driven by THREADS threads for SECONDS:

  plain  GET /authorize (PKCE) with the browser's session → 303 to the redirect URI with a code →
         POST /token (client_secret_basic, code_verifier): a bearer access token.
  fapi   POST /par (private_key_jwt client assertion, PKCE) → GET /authorize?request_uri=… with the session →
         POST /token (a second assertion, and a DPoP proof): a DPoP-bound access token.

Usage:
  flows.py jwks PRIVATE_JWK OUT_JWKS
      adds its RFC 7638 thumbprint to PRIVATE_JWK as its kid, and writes its public half as a JWK Set to OUT_JWKS
      (for `trifactord clients create --jwks-file`).
  flows.py session BASE COOKIES --client ID --secret S
      a new user (password only) signs in once through the hosted pages for client ID; the browser's cookies
      (its session) go to COOKIES as JSON.
  flows.py run BASE OUT --kind plain|fapi --client ID[,ID…] --cookies COOKIES [--secret S]
               [--signing-key JWK --dpop-key JWK] --threads N --seconds S --count C [--server-pids PIDS]
      (fapi: the flows go to the clients in turn, all registered with the signing key: trifactord takes 60
      pushed requests of a client at once, then 10 a second)
      C flows' assertions, proofs and PKCE pairs are made ahead (python3-cryptography), then the flows run; each
      assertion and proof is sent once. OUT gets `flows`, `elapsed`, `failures`, the first failure, and the CPU
      seconds of this driver and (with --server-pids) of the server over the flows.

Each authorization request is a new connection from a loopback address of its own (the hosted pages start 30
flows per client address, then one every 2 s), carrying the session cookie; the relying party's requests (PAR,
token) go over one keep-alive connection per thread.
"""
import argparse
import base64
import hashlib
import http.client
import json
import os
import secrets
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dpop_proofs import as_int, b64  # noqa: E402  (bench/oidc/dpop_proofs.py)
from hosted import REDIRECT, Browser, cpu_seconds, password_user, path_of  # noqa: E402  (bench/oidc/hosted.py)

ASSERTION = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"


def jwks(a):
    """The signing key's kid (its thumbprint) and its public JWK Set."""
    jwk = json.load(open(a.out))
    canonical = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"))
    jwk["kid"] = b64(hashlib.sha256(canonical.encode()).digest())
    json.dump(jwk, open(a.out, "w"))
    json.dump({"keys": [{k: jwk[k] for k in ("kty", "crv", "x", "y", "kid")}]}, open(a.base_or_jwks, "w"))


def session(a):
    """One hosted sign-in for a password-only user, keeping the browser's cookies."""
    email, password = password_user(a.base, 0, str(int(time.time() * 1000)))
    b = Browser(a.base)
    query = urllib.parse.urlencode({"response_type": "code", "client_id": a.client, "redirect_uri": REDIRECT,
                                    "scope": "openid", "state": "s", "code_challenge": "x" * 43,
                                    "code_challenge_method": "S256"})
    status, location, _ = b.call("GET", "/authorize?" + query)
    fields = b.page(path_of(location))
    status, location, _ = b.call("POST", "/authorize/sign-in",
                                 {"flow": fields["flow"], "csrf": fields["csrf"], "email": email})
    fields = b.page(path_of(location))
    status, location, _ = b.call("POST", "/authorize/password",
                                 {"flow": fields["flow"], "csrf": fields["csrf"], "password": password})
    if status != 303 or not location.startswith(REDIRECT):
        raise SystemExit(f"flows: the sign-in ended with {status} {location[:80]}")
    b.close()
    with open(a.out, "w") as f:
        json.dump(b.cookies, f)


class Signer:
    """An ES256 key from a private JWK: compact JWTs with a given header."""

    def __init__(self, path):
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
        self.jwk = json.load(open(path))
        self.key = ec.derive_private_key(as_int(self.jwk["d"]), ec.SECP256R1())
        self.ecdsa, self.decode = ec.ECDSA(hashes.SHA256()), decode_dss_signature
        self.public = {k: self.jwk[k] for k in ("kty", "crv", "x", "y")}

    def jwt(self, header, claims):
        signing_input = b64(json.dumps(header, separators=(",", ":")).encode()) + "." + \
            b64(json.dumps(claims, separators=(",", ":")).encode())
        r, s = self.decode(self.key.sign(signing_input.encode(), self.ecdsa))
        return signing_input + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big"))


def material(a):
    """Everything a flow sends that can be made ahead: a PKCE pair, and for fapi two assertions and a proof."""
    out, now, clients = [], int(time.time()), a.client.split(",")
    signing = Signer(a.signing_key) if a.kind == "fapi" else None
    dpop = Signer(a.dpop_key) if a.kind == "fapi" else None
    for _ in range(a.count):
        verifier = secrets.token_urlsafe(48)
        challenge = b64(hashlib.sha256(verifier.encode()).digest())
        client = clients[len(out) % len(clients)]
        one = {"verifier": verifier, "challenge": challenge, "client": client}
        if signing:
            kid = signing.jwk["kid"]

            def assertion():
                return signing.jwt({"alg": "ES256", "kid": kid}, {
                    "iss": client, "sub": client, "aud": a.base, "iat": now, "exp": now + 120,
                    "jti": secrets.token_urlsafe(16)})
            one["par"], one["token"] = assertion(), assertion()
            one["proof"] = dpop.jwt({"typ": "dpop+jwt", "alg": "ES256", "jwk": dpop.public}, {
                "jti": secrets.token_urlsafe(12), "htm": "POST", "htu": a.base + "/token", "iat": now})
        out.append(one)
    return out


def run(a):
    made = material(a)
    cookies = json.load(open(a.cookies))
    cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
    url = urllib.parse.urlparse(a.base)
    basic = "Basic " + base64.b64encode(f"{a.client}:{a.secret}".encode()).decode() if a.secret else None
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    lock = threading.Lock()
    done, failures = [0], []
    deadline = [0.0]

    def take():
        with lock:
            return made.pop() if made else None

    def post(conn, path, body, headers):
        conn.request("POST", path, body=urllib.parse.urlencode(body), headers={**form, **headers})
        r = conn.getresponse()
        return r.status, r.read()

    def authorize(query):
        b = Browser(a.base)
        try:
            status, location, _ = b.call("GET", "/authorize?" + urllib.parse.urlencode(query),
                                         headers={"Cookie": cookie})
        finally:
            b.close()
        if status != 303 or not location.startswith(REDIRECT):
            raise RuntimeError(f"authorize {status} {location[:100]}")
        return urllib.parse.parse_qs(urllib.parse.urlparse(location).query)["code"][0]

    def flow(rp, one):
        if a.kind == "plain":
            code = authorize({"response_type": "code", "client_id": a.client, "redirect_uri": REDIRECT,
                              "scope": "openid", "state": "s", "code_challenge": one["challenge"],
                              "code_challenge_method": "S256"})
            status, data = post(rp, "/token", {"grant_type": "authorization_code", "code": code,
                                               "redirect_uri": REDIRECT, "code_verifier": one["verifier"]},
                                {"Authorization": basic})
            kind = "Bearer"
        else:
            status, data = post(rp, "/par", {
                "response_type": "code", "client_id": one["client"], "redirect_uri": REDIRECT, "scope": "openid",
                "state": "s", "code_challenge": one["challenge"], "code_challenge_method": "S256",
                "client_assertion_type": ASSERTION, "client_assertion": one["par"]}, {})
            if status != 201:
                raise RuntimeError(f"par {status} {data[:120]!r}")
            code = authorize({"client_id": one["client"], "request_uri": json.loads(data)["request_uri"]})
            status, data = post(rp, "/token", {
                "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                "code_verifier": one["verifier"], "client_assertion_type": ASSERTION,
                "client_assertion": one["token"]}, {"DPoP": one["proof"]})
            kind = "DPoP"
        if status != 200 or json.loads(data)["token_type"] != kind:
            raise RuntimeError(f"token {status} {data[:120]!r}")

    def worker():
        rp = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        while time.time() < deadline[0]:
            one = take()
            if one is None:
                with lock:
                    failures.append("out of material: give more with --count")
                return
            try:
                flow(rp, one)
            except Exception as e:  # noqa: BLE001 (the failures are the report)
                with lock:
                    failures.append(str(e)[:200])
                rp.close()
                rp = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
                continue
            with lock:
                done[0] += 1
        rp.close()

    server0, c0, t0 = cpu_seconds(a.server_pids), time.process_time(), time.time()
    deadline[0] = t0 + a.seconds
    threads = [threading.Thread(target=worker) for _ in range(a.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed, driver = time.time() - t0, time.process_time() - c0
    server = cpu_seconds(a.server_pids) - server0
    with open(a.out, "w") as f:
        f.write(f"flows {done[0]}\nelapsed {elapsed:.3f}\nfailures {len(failures)}\n")
        f.write(f"driver_cpu {driver:.3f}\nserver_cpu {server:.3f}\n")
        if failures:
            f.write(f"first_failure {failures[0]}\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["jwks", "session", "run"])
    p.add_argument("base")
    p.add_argument("out")
    p.add_argument("--client")
    p.add_argument("--secret")
    p.add_argument("--kind", choices=["plain", "fapi"], default="plain")
    p.add_argument("--cookies")
    p.add_argument("--signing-key", help="the client's private JWK (with its kid), for its assertions")
    p.add_argument("--dpop-key", help="the DPoP private JWK")
    p.add_argument("--threads", type=int, default=16)
    p.add_argument("--seconds", type=float, default=8)
    p.add_argument("--count", type=int, default=5000)
    p.add_argument("--server-pids", default="")
    a = p.parse_args()
    if a.mode == "jwks":
        a.out, a.base_or_jwks = a.base, a.out
    {"jwks": jwks, "session": session, "run": run}[a.mode](a)


if __name__ == "__main__":
    main()
