#!/usr/bin/env python3
"""DPoP proofs (RFC 9449) for the benchmark, made ahead of the run with Debian's python3-cryptography: one ES256
key, and for each of THREADS files COUNT proofs of METHOD URL, each with its own jti and (with --token) the
access token's hash. Proofs are single use, so wrk sends each once.

Usage: dpop_proofs.py key OUT_JWK                      a new P-256 key (private JWK)
       dpop_proofs.py proofs KEY_JWK METHOD URL OUT_PREFIX --threads T --count N [--token TOKEN]
           writes OUT_PREFIX-1 … OUT_PREFIX-T, N proofs each, one a line
"""
import argparse
import base64
import hashlib
import json
import secrets
import time

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def as_int(text: str) -> int:
    return int.from_bytes(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)), "big")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["key", "proofs"])
    p.add_argument("args", nargs="+")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--count", type=int, default=1000)
    p.add_argument("--token")
    a = p.parse_args()
    if a.mode == "key":
        key = ec.generate_private_key(ec.SECP256R1())
        numbers = key.private_numbers()
        jwk = {"kty": "EC", "crv": "P-256", "x": b64(numbers.public_numbers.x.to_bytes(32, "big")),
               "y": b64(numbers.public_numbers.y.to_bytes(32, "big")), "d": b64(numbers.private_value.to_bytes(32, "big"))}
        open(a.args[0], "w").write(json.dumps(jwk))
        return
    key_file, method, url, prefix = a.args
    jwk = json.load(open(key_file))
    key = ec.derive_private_key(as_int(jwk["d"]), ec.SECP256R1())
    public = {k: jwk[k] for k in ("kty", "crv", "x", "y")}
    header = b64(json.dumps({"typ": "dpop+jwt", "alg": "ES256", "jwk": public}, separators=(",", ":")).encode())
    ath = b64(hashlib.sha256(a.token.encode()).digest()) if a.token else None
    now = int(time.time())
    for t in range(1, a.threads + 1):
        with open(f"{prefix}-{t}", "w") as out:
            for _ in range(a.count):
                claims = {"jti": secrets.token_urlsafe(12), "htm": method, "htu": url, "iat": now}
                if ath:
                    claims["ath"] = ath
                signing_input = header + "." + b64(json.dumps(claims, separators=(",", ":")).encode())
                r, s = decode_dss_signature(key.sign(signing_input.encode(), ec.ECDSA(hashes.SHA256())))
                out.write(signing_input + "." + b64(r.to_bytes(32, "big") + s.to_bytes(32, "big")) + "\n")


if __name__ == "__main__":
    main()
