#!/usr/bin/env python3
"""Writes the seed corpus of each fuzz harness into fuzz/corpus/<harness>/seed-*.

Seeds come from the WebAuthn L3 §16 test vectors and the generated packed
self-attestation fixtures that the WebAuthn tests use (their hex is read out
of Tests/WebAuthnTests/*Vectors.swift), the inputs of the security review's
findings, and hand-made HTTP heads and JSON bodies. Run it again after
changing it; files libFuzzer added (named by their SHA-1) are left alone.
Standard library only.
"""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "fuzz" / "corpus"


def vectors():
    """Every hex string field of the vector files, by field name."""
    found = {}
    for name in ("W3CVectors.swift", "GeneratedVectors.swift"):
        text = (ROOT / "Tests" / "WebAuthnTests" / name).read_text()
        for key, value in re.findall(r'(\w+)(?::| =) "([0-9a-f]+)"', text):
            found.setdefault(key, []).append(bytes.fromhex(value))
    return found


def cbor_item_length(data, offset=0):
    """Length of the CBOR item at offset (definite lengths only), for slicing seeds."""
    head = data[offset]
    major, info = head >> 5, head & 0x1F
    offset += 1
    if info < 24:
        arg = info
    else:
        width = 1 << (info - 24)
        arg = int.from_bytes(data[offset:offset + width], "big")
        offset += width
    if major in (2, 3):
        return offset + arg
    if major in (4, 5):
        for _ in range(arg * (2 if major == 5 else 1)):
            offset = cbor_item_length(data, offset)
        return offset
    if major == 6:
        return cbor_item_length(data, offset)
    return offset


def auth_data_of(attestation):
    """The authData byte string of an attestation object."""
    marker = b"\x68authData"
    start = attestation.index(marker) + len(marker)
    end = cbor_item_length(attestation, start)
    head = attestation[start]
    skip = {0x58: 2, 0x59: 3}.get(head, 1)
    return attestation[start + skip:end]


def cose_key_of(auth_data):
    length = int.from_bytes(auth_data[53:55], "big")
    start = 55 + length
    return auth_data[start:cbor_item_length(auth_data, start)]


def write(harness, name, data):
    folder = CORPUS / harness
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"seed-{name}").write_bytes(data)


def main():
    v = vectors()
    attestations = v.get("attestationObject", []) + v.get("crossOriginAttestationObject", []) + v.get("packedES256AttestationObject", [])
    half_float = bytes.fromhex("f90000")
    rp_hash = bytes.fromhex("bfabc37432958b063360d3ad6461c9c4735ae7f8edd46592a5e0f01452b2e4b5")  # SHA-256("example.org")

    # CBOR: attestation objects, COSE keys, small items, and the review's inputs.
    for i, a in enumerate(attestations):
        write("cbor", f"attestation-{i}", a)
        write("attestation-object", f"w3c-{i}", a)
        auth = auth_data_of(a)
        write("authenticator-data", f"registration-{i}", auth)
        key = cose_key_of(auth)
        write("cose-key", f"w3c-{i}", key)
        write("cbor", f"cose-{i}", key)
    for i, small in enumerate(["00", "20", "3903e7", "4401020304", "6461626364", "820102", "a1016161", "c11a514b67b0",
                               "f4", "f5", "f6", "a2626964f56378787880"]):
        write("cbor", f"small-{i}", bytes.fromhex(small))
    write("cbor", "finding-1-half-float", half_float)
    write("cbor", "finding-2-huge-map", bytes.fromhex("b92af8") + b"".join(b"\x19" + k.to_bytes(2, "big") + b"\xf6" for k in range(11000)))
    write("attestation-object", "finding-1-half-float", half_float)

    # Authenticator data: the assertions', and the passwordless crash of finding 1.
    for i, auth in enumerate(v.get("authenticatorData", [])):
        write("authenticator-data", f"assertion-{i}", auth)
    write("authenticator-data", "finding-1-half-float-extensions", rp_hash + bytes.fromhex("8500000001") + half_float)
    write("authenticator-data", "extensions-map", rp_hash + bytes.fromhex("8500000001") + bytes.fromhex("a16b6372656450726f7073a162726bf5"))

    # clientDataJSON of assertions and registrations.
    for field in ("clientDataJSON", "registrationClientDataJSON", "crossOriginClientDataJSON", "packedES256ClientDataJSON"):
        for i, data in enumerate(v.get(field, [])):
            write("client-data", f"{field}-{i}", data)

    # DER SubjectPublicKeyInfo: P-256 from the vectors' COSE keys, uncompressed and compressed, and finding 8's trailing bytes.
    p256 = bytes.fromhex("3059301306072a8648ce3d020106082a8648ce3d030107034200")
    p256_compressed = bytes.fromhex("3039301306072a8648ce3d020106082a8648ce3d030107032200")
    ed25519 = bytes.fromhex("302a300506032b6570032100")
    for i, a in enumerate(attestations):
        key = cose_key_of(auth_data_of(a))
        if key.startswith(bytes.fromhex("a5010203262001")):
            x, y = key[10:42], key[45:77]
            write("der-public-key", f"p256-{i}", p256 + b"\x04" + x + y)
            write("der-public-key", f"p256-compressed-{i}", p256_compressed + bytes([2 + (y[-1] & 1)]) + x)
            write("der-public-key", f"finding-8-trailing-{i}", p256 + b"\x04" + x + y + b"\x30\x00")
    write("der-public-key", "ed25519", ed25519 + bytes(range(32)))

    # HTTP heads: well-formed ones and every framing finding.
    heads = {
        "get": "GET /health HTTP/1.1\r\nHost: x\r\n\r\n",
        "post": "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n",
        "chunked": "POST /v1/sessions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
        "http10": "GET / HTTP/1.0\r\n\r\n",
        "finding-6-two-lengths": "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 40\r\n\r\n",
        "finding-6-length-and-chunked": "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
        "finding-6-negative-length": "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        "gzip-chunked": "POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
        "space-before-colon": "GET / HTTP/1.1\r\nHost : x\r\n\r\n",
        "finding-9-escaped-nul": "GET /health%00 HTTP/1.1\r\nHost: x\r\n\r\n",
        "finding-9-raw-nul": "GET /health\x00x HTTP/1.1\r\nHost: x\r\n\r\n",
        "finding-5-long-query": "GET /health?" + "a=1&" * 500 + " HTTP/1.1\r\nHost: x\r\n\r\n",
        "bare-lf": "GET /health HTTP/1.1\nHost: x\n\n",
    }
    for name, head in heads.items():
        write("http-head", name, head.encode("latin-1"))

    # JSON bodies: each request model, finding 10's numbers, and deep nesting.
    bodies = {
        "account": '{"email":"ann@example.com","password":"correct horse battery"}',
        "enroll-totp": '{"kind":"totp","digits":8,"algorithm":"SHA256"}',
        "enroll-device": '{"kind":"device","public_key":"MFkw","device_name":"Ann\'s iPhone"}',
        "finish": '{"code":"123456","display_name":"Phone"}',
        "passkey": '{"assertion":{"id":"AAAA","type":"public-key","response":{"clientDataJSON":"e30","authenticatorData":"AAAA","signature":"MA"}}}',
        "authorization": '{"action":{"type":"transfer","amount":"250.00","currency":"EUR","payee":"Alice"}}',
        "verify": '{"brand":"Acme","workflow":[{"channel":"sms","to":"447700900000"}],"code_length":6}',
        "finding-10-fraction": '{"kind":"totp","digits":6.5}',
        "finding-10-big": '{"kind":"totp","digits":9223372036854775808}',
        "finding-10-huge": '{"kind":"totp","digits":1e308}',
        "nested": "[" * 200 + "]" * 200,
        "unicode": '{"email":"\\ud800@example.com","password":"\\u0000"}',
    }
    for name, body in bodies.items():
        write("json-body", name, body.encode())

    # JOSE's JSON (headers, JWKs, claims of tokens and DPoP proofs): the reader's edges.
    jose = {
        "dpop-header": '{"typ":"dpop+jwt","alg":"ES256","jwk":{"kty":"EC","crv":"P-256","x":"f83O","y":"x_FE"}}',
        "claims": '{"iss":"https://a.example","aud":["x","y"],"exp":1796578598,"iat":1.5e9,"cnf":{"jkt":"abc"}}',
        "duplicate": '{"alg":"ES256","alg":"none"}',
        "escaped-duplicate": '{"alg":"ES256","\\u0061lg":"none"}',
        "surrogates": '{"name":"\\ud83d\\ude00","lone":"\\udc00"}',
        "numbers": '{"a":-0,"b":0.5e-3,"d":9223372036854775807,"e":9223372036854775808,"f":-12.25E+2}',
        "leading-zero": '{"f":01}',
        "huge-number": '{"c":1e400}',
        "control": '{"a":"\x01"}',
        "deep": '{"a":' * 600 + "1" + "}" * 600,
        "trailing": '{"a":1} x',
        "bad-utf8": '{"a":"\xff\xfe"}',
        "whitespace": ' \t\r\n{ "a" : [ true , false , null ] } ',
    }
    for name, text in jose.items():
        write("jose-json", name, text.encode("latin-1"))


if __name__ == "__main__":
    main()
