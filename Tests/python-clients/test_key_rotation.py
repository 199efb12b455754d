"""Rotating the key that seals TOTP secrets while trifactord serves: a key file in the first
format (one base64 key) becomes a ring, the new key seals at once, older secrets are re-sealed
in the background, the old key is retired once nothing uses it, and sign-ins with an
authenticator app work before, during and after. A wrong or missing key stops start-up."""

import base64
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pyotp
import requests

from conftest import Server, _binary, _Daemon, wait_until

PASSWORD = "rotation-correct-horse-battery"


def start(binary, tmp, url, key_file, extra=()):
    daemon = _Daemon(binary, ["--listen", "127.0.0.1:0", "--database-url", url, "--dev", "--key-file", str(key_file),
                              "--key-retire-after", "2", *extra], tmp)
    return daemon, Server(process=daemon.process, port=daemon.port, api_key="", api_secret="", cert=None,
                          lines=daemon.lines, lock=daemon.lock, scheme="http")


def enroll_totp(srv, email):
    srv.create_account(email, PASSWORD, "Rotation")
    token = srv.sign_in(email, PASSWORD)
    started = srv.expect(202, "POST", "/v1/mfa/enrollments", {"kind": "totp"}, token=token)
    totp = pyotp.TOTP(started["secret"])
    enrolled = srv.expect(201, "POST", f"/v1/mfa/enrollments/{started['enrollment_session']}",
                          {"code": totp.now(), "display_name": "App"}, token=token)
    totp.enrollment_id, totp.last_step = enrolled["enrollment_id"], int(time.time()) // 30
    return totp


def mfa_sign_in(srv, email, totp):
    """Password then a TOTP code: a fresh code each time (the server refuses a step used before)."""
    pending = srv.expect(200, "POST", "/v1/sessions", {"email": email, "password": PASSWORD})
    # The server takes the steps around now (one either side), each once: use the next unused one.
    step = totp.last_step + 1
    while step > int(time.time()) // 30 + 1:
        time.sleep(0.5)
    totp.last_step = step
    r = srv.call("POST", "/v1/sessions/mfa", {"pending_credential": pending["pending_credential"],
                                              "enrollment_id": totp.enrollment_id, "code": totp.at(step * 30)})
    return r.status_code, r.text


def ring(binary, key_file, url):
    out = subprocess.run([binary, "keys", "ring", "--json", "--key-file", str(key_file), "--database-url", url],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    return {k["id"]: k for k in json.loads(out.stdout)}


def test_rotation_while_serving_then_a_wrong_or_missing_key_stops_start_up():
    binary = _binary()
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-rotate."))
    url = f"sqlite:{tmp / 't.db'}"
    key_file = tmp / "trifactor.key"
    # The first format: one base64 key.
    fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, base64.b64encode(os.urandom(32)) + b"\n")
    os.close(fd)
    daemon, srv = start(binary, tmp, url, key_file)
    try:
        users = [(f"rot{i}@example.com", enroll_totp(srv, f"rot{i}@example.com")) for i in range(3)]
        before = ring(binary, key_file, url)
        assert list(before) == ["k0"] and before["k0"]["secrets"] >= 3 and before["k0"]["active"]

        rotated = subprocess.run([binary, "keys", "rotate", "--key-file", str(key_file)], capture_output=True, text=True, timeout=30)
        assert rotated.returncode == 0 and "Key k1 seals" in rotated.stdout, rotated.stderr
        assert oct(key_file.stat().st_mode & 0o777) == "0o600"
        # A secret sealed right after the rotation, and the old ones, all open.
        users.append(("rot-new@example.com", enroll_totp(srv, "rot-new@example.com")))
        status, text = mfa_sign_in(srv, users[0][0], users[0][1])
        assert status == 201, text

        # In the background every secret moves to k1, then k0 is retired from the file.
        wait_until(lambda: list(ring(binary, key_file, url)) == ["k1"] and ring(binary, key_file, url)["k1"]["secrets"] >= 4,
                   "the secrets re-sealed under k1 and k0 retired", timeout=40, lines=srv.lines)
        text = key_file.read_text()
        assert text.count("\nk1 ") == 1 and "k0 " not in text
        assert any('"keys_retired"' in line for line in srv.lines)
        for email, totp in users[1:]:
            status, text = mfa_sign_in(srv, email, totp)
            assert status == 201, (email, text)
    finally:
        daemon.stop()

    # After a restart on the rotated ring, sign-ins still work.
    daemon, srv = start(binary, tmp, url, key_file)
    try:
        status, text = mfa_sign_in(srv, users[2][0], users[2][1])
        assert status == 201, text
    finally:
        daemon.stop()

    def refused(path):
        p = subprocess.run([binary, "serve", "--listen", "127.0.0.1:0", "--database-url", url, "--key-file", str(path)],
                           capture_output=True, text=True, timeout=30)
        return p.returncode, p.stderr

    wrong = tmp / "wrong.key"
    fd = os.open(wrong, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, f"k1 2026-12-01T00:00:00Z {base64.b64encode(os.urandom(32)).decode()}\n".encode())
    os.close(fd)
    code, err = refused(wrong)
    assert code != 0 and "does not open the secrets" in err, err
    code, err = refused(tmp / "missing.key")
    assert code != 0 and "is missing, but the database holds secrets" in err, err
    # Dev mode does not paper over it with a fresh key either.
    p = subprocess.run([binary, "serve", "--dev", "--listen", "127.0.0.1:0", "--database-url", url, "--key-file", str(tmp / "missing2.key")],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode != 0 and "is missing" in p.stderr and not (tmp / "missing2.key").exists()
