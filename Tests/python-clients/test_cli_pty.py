"""`trifactor`, the command-line authenticator, driven as a person drives it: in
pseudo-terminals (pexpect), typing passwords, codes, passphrases and the number
shown on the sign-in screen, against a real trifactord (`http_server`).

One terminal is the laptop that became the user's device (`--profile laptop`);
another starts a sign-in (`--profile desk`), which waits until the number shown
there is typed into the laptop's `trifactor approve`.
"""

import os
import re
import stat
import tempfile
from pathlib import Path

import pexpect
import pytest

PASSWORD = "correct horse battery staple"
PASSPHRASE = "a long vault passphrase"


def _cli() -> str:
    path = os.environ.get("TRIFACTOR_CLI", ".build/debug/trifactor")
    if not os.access(path, os.X_OK):
        pytest.fail(f"TRIFACTOR_CLI={path!r} is not an executable: `swift build --product trifactor`", pytrace=False)
    return path


@pytest.fixture
def home(http_server):
    """Environment for the CLI: its own XDG folders and the server's URL."""
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-cli."))
    run = tmp / "run"
    run.mkdir(mode=0o700)
    env = dict(os.environ)
    env.pop("TRIFACTOR_VAULT_PASSPHRASE_FILE", None)
    env.update({
        "XDG_DATA_HOME": str(tmp / "data"), "XDG_RUNTIME_DIR": str(run),
        "TRIFACTOR_SERVER": f"http://127.0.0.1:{http_server.port}", "TERM": "dumb",
    })
    return env


def spawn(env, *args, timeout=20) -> pexpect.spawn:
    return pexpect.spawn(_cli(), list(args), env=env, encoding="utf-8", timeout=timeout)


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    output = child.before
    child.close()
    assert child.signalstatus is None, f"{child.args} died of signal {child.signalstatus}: {output!r}"
    return child.exitstatus


def sign_up(env, server, email):
    child = spawn(env, "signup", email)
    child.expect("New password: ")
    child.sendline(PASSWORD)
    child.expect("Check .* for a code")
    assert finish(child) == 0
    code = re.search(r"\d{6}", server.wait_message(email, "email")["text"]).group()
    child = spawn(env, "verify-email", email)
    child.expect("Code from the email: ")
    child.sendline(code)
    child.expect("is verified")
    assert finish(child) == 0


def login_password_only(env, profile, email):
    child = spawn(env, "--profile", profile, "login", email)
    child.expect("Password: ")
    child.sendline(PASSWORD)
    # The first secret stored for a profile creates its vault.
    child.expect("New vault passphrase: ")
    child.sendline(PASSPHRASE)
    child.expect("Again: ")
    child.sendline(PASSPHRASE)
    child.expect(r"Signed in as .* \(AAL1, pwd\)")
    assert finish(child) == 0


def unlock(env, profile):
    child = spawn(env, "--profile", profile, "vault", "unlock", "--for", "5m")
    child.expect("Vault passphrase: ")
    child.sendline(PASSPHRASE)
    child.expect("Unlocked until")
    assert finish(child) == 0


def start_push_sign_in(env, email):
    """`trifactor --profile desk login EMAIL` up to "Pick N on your device.": the waiting child and N."""
    desk = spawn(env, "--profile", "desk", "login", email, timeout=60)
    desk.expect("Password: ")
    desk.sendline(PASSWORD)
    desk.expect(r"Pick (\d+) on your device\.")
    return desk, int(desk.match.group(1))


def test_a_sign_in_on_one_terminal_is_approved_by_typing_its_number_on_another(http_server, home):
    email = "pty@example.com"
    sign_up(home, http_server, email)
    login_password_only(home, "laptop", email)
    unlock(home, "laptop")

    # Two keys: one signs polls (the unlocked vault releases it), the approval key only the passphrase typed for it.
    child = spawn(home, "--profile", "laptop", "device", "init", "--name", "laptop")
    child.expect(r"Guard this device's approvals with your vault passphrase \(vault passphrase\): ")
    child.sendline(PASSPHRASE)
    child.expect(r"Add this device to your account \(vault passphrase\): ")
    child.sendline(PASSPHRASE)
    child.expect(r"This machine is device ([0-9a-f-]{36}), key ")
    assert finish(child) == 0
    listed = spawn(home, "--profile", "laptop", "factors", "list")
    listed.expect("device  laptop  approvals need the vault passphrase")
    assert finish(listed) == 0

    # Terminal 1: the sign-in, which shows a number and waits.
    desk, number = start_push_sign_in(home, email)

    # Terminal 2: the device, where the user types that number.
    laptop = spawn(home, "--profile", "laptop", "approve", "--once", timeout=40)
    laptop.expect(r"Sign-in from 127\.0\.0\.1 with trifactor CLI .*, \d+ s left\.")
    laptop.expect("Type the number shown on the sign-in screen")
    laptop.sendline(str(number))
    # The unlock window does not release the approval key: a typo approves nothing, and the sign-in still waits.
    laptop.expect(r"Approve the sign-in \(vault passphrase\): ")
    laptop.sendline("not the passphrase")
    laptop.expect("That did not match")
    assert finish(laptop) != 0
    laptop = spawn(home, "--profile", "laptop", "approve", "--once", timeout=40)
    laptop.expect("Type the number shown on the sign-in screen")
    laptop.sendline(str(number))
    laptop.expect(r"Approve the sign-in \(vault passphrase\): ")
    laptop.sendline(PASSPHRASE)
    laptop.expect("Approved.")
    assert finish(laptop) == 0

    # Terminal 1 goes on: signed in with the device, then its own vault is made for the token.
    desk.expect("New vault passphrase: ")
    desk.sendline(PASSPHRASE)
    desk.expect("Again: ")
    desk.sendline(PASSPHRASE)
    desk.expect(r"Signed in as pty@example\.com \(AAL2, pwd\+swk\+pin\)")
    assert finish(desk) == 0

    unlock(home, "desk")
    who = spawn(home, "--profile", "desk", "whoami")
    who.expect(r"pty@example\.com")
    who.expect(r"AAL2, pwd\+swk\+pin")
    assert finish(who) == 0

    # A wrong number denies, and that sign-in ends: the waiting terminal exits 3.
    desk, shown = start_push_sign_in(home, email)
    laptop = spawn(home, "--profile", "laptop", "approve", "--once", timeout=40)
    laptop.expect("Type the number shown on the sign-in screen")
    laptop.sendline(str(shown + 1 if shown < 99 else shown - 1))
    laptop.expect(r"Approve the sign-in \(vault passphrase\): ")
    laptop.sendline(PASSPHRASE)
    laptop.expect("Denied: that number was not on the sign-in screen")
    assert finish(laptop) == 0
    desk.expect("denied on the device")
    assert finish(desk) == 3


def test_bad_flags_and_secrets_in_arguments_are_refused_with_exit_2(http_server, home):
    for args, sentence in [
        (["login", "--bogus"], "Unknown option --bogus"),
        (["signup", "x@example.com", "--password", "hunter22"], "Secrets are never taken from arguments"),
        (["verify-email", "x@example.com", "--code", "123456"], "Secrets are never taken from arguments"),
        (["--nope", "whoami"], "Unknown option --nope"),
        (["frobnicate"], "Unknown command"),
        (["vault", "unlock", "--for", "forever"], "is not a duration"),
        (["authorize", "transfer", "--amount", "-5", "--currency", "EUR", "--payee", "A", "--from", "x"], "--amount is a positive decimal"),
    ]:
        child = spawn(home, *args)
        child.expect(sentence)
        assert finish(child) == 2, args


def test_a_vault_others_can_read_is_refused_with_the_chmod_to_run(http_server, home):
    email = "perm@example.com"
    sign_up(home, http_server, email)
    login_password_only(home, "default", email)
    vault = Path(home["XDG_DATA_HOME"]) / "trifactor" / "default.vault"
    assert stat.S_IMODE(vault.stat().st_mode) == 0o600
    assert stat.S_IMODE(vault.parent.stat().st_mode) == 0o700
    vault.chmod(0o644)
    child = spawn(home, "whoami")
    child.expect(r"can be read by other users; run `chmod 600 .*default\.vault`")
    assert finish(child) == 1


def test_a_forgotten_password_is_reset_with_the_emailed_code_typed_as_people_type_it(http_server, home):
    import requests

    email = "cli-forgot@example.com"
    sign_up(home, http_server, email)
    # A wrong code is refused with a sentence and exit 1, and nothing changes.
    child = spawn(home, "reset-password", email)
    child.expect("a code is on its way")
    child.expect("Code from the email: ")
    child.sendline("00000000")
    assert finish(child) == 3 and "code" in child.before.lower()  # 3: denied
    earlier = {m["id"] for m in http_server.outbox(email)}
    child = spawn(home, "reset-password", email)
    child.expect("Code from the email: ")
    message = http_server.wait_message(email, "email", timeout=5, exclude_ids=earlier)
    code = re.search(r"(?<!\d)\d{8}(?!\d)", message["text"]).group()
    child.sendline(code[:4] + " " + code[4:])  # as people type it
    child.expect("New password: ")
    child.sendline("a fresh passphrase for the cli")
    child.expect("New password again: ")
    child.sendline("a fresh passphrase for the cli")
    child.expect("is reset and every session is signed out")
    assert finish(child) == 0
    signed_in = requests.post(http_server.base_url + "/v1/sessions", json={"email": email, "password": "a fresh passphrase for the cli"}, timeout=10)
    assert signed_in.status_code == 201, signed_in.text
    old = requests.post(http_server.base_url + "/v1/sessions", json={"email": email, "password": PASSWORD}, timeout=10)
    assert old.status_code == 401
