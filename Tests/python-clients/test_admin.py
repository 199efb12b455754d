"""The admin API and its command line, over real HTTP against a live trifactord: admin keys
made on the host, roles (a read key is refused on every write route), every action audited
with the key's name, and what each action does to a user a person would notice."""

import json
import subprocess
import tempfile
from pathlib import Path

import pyotp
import pytest
import requests

from conftest import _binary, _run, plain_http_server, wait_until

PASSWORD = "admin-tests-correct-horse"
WRITE_ROUTES = [("POST", "disable"), ("POST", "enable"), ("POST", "reset-mfa"), ("POST", "revoke-sessions"),
                ("POST", "verify-email"), ("DELETE", None)]


@pytest.fixture(scope="module")
def admin():
    binary = _binary()
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-admin."))
    url = f"sqlite:{tmp / 't.db'}"
    write = json.loads(_run([binary, "admin-keys", "create", "--name", "ops-alice", "--role", "write", "--json", "--database-url", url]))
    read = json.loads(_run([binary, "admin-keys", "create", "--name", "support-bob", "--role", "read", "--json", "--database-url", url]))
    revoked = json.loads(_run([binary, "admin-keys", "create", "--name", "gone", "--role", "write", "--json", "--database-url", url]))
    _run([binary, "admin-keys", "revoke", revoked["id"], "--database-url", url])
    api = json.loads(_run([binary, "keys", "create", "--name", "app-tests", "--json", "--database-url", url]))
    with plain_http_server(tmp, ["--listen", "127.0.0.1:0", "--database-url", url, "--dev", "--key-file", str(tmp / "k"),
                                 "--test-numbers", "447400123999=1234"], api["api_key"], api["api_secret"]) as srv:
        srv.tokens = {"write": write["token"], "read": read["token"], "revoked": revoked["token"]}
        srv.url, srv.binary = url, binary
        yield srv


def call(srv, method, path, key="write", **kw):
    headers = {"Authorization": f"Bearer {srv.tokens[key]}"} if key else {}
    return requests.request(method, srv.base_url + path, headers=headers, timeout=10, **kw)


def user_with_totp(srv, email):
    """A verified user with an authenticator app enrolled; their id, TOTP and first session token."""
    srv.create_account(email, PASSWORD, "Admin Test")
    token = srv.sign_in(email, PASSWORD)
    started = srv.expect(202, "POST", "/v1/mfa/enrollments", {"kind": "totp"}, token=token)
    totp = pyotp.TOTP(started["secret"])
    srv.expect(201, "POST", f"/v1/mfa/enrollments/{started['enrollment_session']}", {"code": totp.now(), "display_name": "App"}, token=token)
    found = call(srv, "GET", "/admin/v1/users", params={"email": email})
    assert found.status_code == 200, found.text
    return found.json()["users"][0]["id"], totp, token


def audit(srv, **params):
    r = call(srv, "GET", "/admin/v1/audit", params={"limit": 1000, **params})
    assert r.status_code == 200, r.text
    return r.json()["entries"]


def test_keys_and_roles(admin):
    uid, _, session = user_with_totp(admin, "roles@example.com")
    assert call(admin, "GET", "/admin/v1/users", key=None, params={"email": "roles@example.com"}).status_code == 401
    # A request with no Authorization header at all is audited like a wrong key.
    assert any(e.get("detail") == "no key: GET /admin/v1/users" for e in audit(admin, kind="admin_key.rejected"))
    assert call(admin, "GET", "/admin/v1/users", key="revoked", params={"email": "roles@example.com"}).status_code == 401
    forged = requests.get(admin.base_url + "/admin/v1/users", params={"email": "roles@example.com"}, timeout=10,
                          headers={"Authorization": "Bearer " + admin.tokens["write"][:-4] + "AAAA"})
    assert forged.status_code == 401 and forged.json()["code"] == "admin_key_required"
    # A session token is not an admin key.
    assert requests.get(admin.base_url + "/admin/v1/audit", headers={"Authorization": "Bearer " + session}, timeout=10).status_code == 401
    # The read key reads, and is refused on every write route, changing nothing.
    assert call(admin, "GET", f"/admin/v1/users/{uid}", key="read").status_code == 200
    for method, action in WRITE_ROUTES:
        path = f"/admin/v1/users/{uid}" + (f"/{action}" if action else "")
        r = call(admin, method, path, key="read")
        assert r.status_code == 403 and r.json()["code"] == "admin_read_only", (method, path, r.text)
    shown = call(admin, "GET", f"/admin/v1/users/{uid}", key="read").json()
    assert not shown["user"]["disabled"] and len(shown["factors"]) >= 1
    refusals = [e for e in audit(admin, kind="admin_key.rejected") if "support-bob read-only" in e.get("detail", "")]
    assert len(refusals) == len(WRITE_ROUTES)


def test_show_disable_enable_and_revoke_sessions(admin):
    uid, totp, token = user_with_totp(admin, "dis@example.com")
    shown = call(admin, "GET", f"/admin/v1/users/{uid}").json()
    assert shown["user"]["email"] == "dis@example.com" and shown["user"]["email_verified"]
    assert [f["kind"] for f in shown["factors"]] == ["totp"] and shown["devices"] == [] and shown["passkeys"] == []
    assert len(shown["sessions"]) == 1
    assert call(admin, "GET", "/admin/v1/users", params={"email": "nobody@example.com"}).json()["users"] == []
    assert call(admin, "GET", "/admin/v1/users/nope").status_code == 404

    disabled = call(admin, "POST", f"/admin/v1/users/{uid}/disable").json()
    assert disabled["sessions_ended"] == 1
    assert requests.get(admin.base_url + "/v1/session", headers={"Authorization": f"Bearer {token}"}, timeout=10).status_code == 401
    # The right password learns the account is disabled; a wrong one learns nothing more than usual.
    right = admin.call("POST", "/v1/sessions", {"email": "dis@example.com", "password": PASSWORD})
    assert right.status_code == 403 and right.json()["code"] == "account_disabled"
    assert admin.call("POST", "/v1/sessions", {"email": "dis@example.com", "password": "not-the-password"}).status_code == 401
    assert call(admin, "GET", "/admin/v1/users", params={"id": uid}).json()["users"][0]["disabled"]

    call(admin, "POST", f"/admin/v1/users/{uid}/enable")
    pending = admin.expect(200, "POST", "/v1/sessions", {"email": "dis@example.com", "password": PASSWORD})
    assert pending.get("pending_credential")
    kinds = [e["kind"] for e in audit(admin, user=uid)]
    assert "admin.user_disabled" in kinds and "admin.user_enabled" in kinds
    mine = [e for e in audit(admin, user=uid) if e["kind"].startswith("admin.")]
    assert all("admin=ops-alice" in e.get("detail", "") for e in mine), mine


def test_reset_mfa_for_a_lost_phone_emails_the_user(admin):
    uid, totp, token = user_with_totp(admin, "lost@example.com")
    reset = call(admin, "POST", f"/admin/v1/users/{uid}/reset-mfa").json()
    assert reset["factors_removed"] == 1 and reset["sessions_ended"] == 1
    email = admin.wait_message("lost@example.com", "email")
    assert "two-step verification was reset" in email["text"] or "removed every second factor" in email["text"]
    # The password alone signs in again, to set up a new second factor.
    assert admin.sign_in("lost@example.com", PASSWORD)
    assert call(admin, "GET", f"/admin/v1/users/{uid}").json()["factors"] == []


def test_delete_erases_the_person_and_pseudonymises_the_audit_trail(admin):
    uid, _, _ = user_with_totp(admin, "erase@example.com")
    assert len(audit(admin, user=uid)) > 3
    deleted = call(admin, "DELETE", f"/admin/v1/users/{uid}")
    assert deleted.status_code == 200, deleted.text
    assert call(admin, "GET", f"/admin/v1/users/{uid}").status_code == 404
    assert audit(admin, user=uid) == []
    erased = [e for e in audit(admin, kind="admin.user_deleted")][-1]
    pseudonym = erased["detail"].split("user=")[1]
    trail = audit(admin, user=pseudonym)
    assert len(trail) > 3 and all(e.get("ip") is None and e.get("user_agent") is None for e in trail)
    assert not any("erase@example.com" in json.dumps(m) for m in admin.outbox("erase@example.com"))
    # The address can sign up again, as a new person.
    assert admin.call("POST", "/v1/accounts", {"email": "erase@example.com", "password": PASSWORD}).status_code == 202


def test_delete_also_erases_texts_to_the_users_phone_which_no_test_number_may_take_over(admin):
    email, number = "phone-erase@example.com", "447400765432"
    admin.create_account(email, PASSWORD, "Phone")
    token = admin.sign_in(email, PASSWORD)
    session = admin.expect(202, "POST", "/v1/mfa/enrollments", {"kind": "phone", "phone": "+" + number}, token=token)["enrollment_session"]
    # The text goes out before its code is entered (entering it voids whatever is still unsent).
    wait_until(lambda: any(m["status"] == "sent" for m in admin.outbox(number)), "the enrollment text to go out")
    code = admin.code_for(number)
    admin.expect(201, "POST", f"/v1/mfa/enrollments/{session}", {"code": code}, token=token)
    # A test number never sends and takes a fixed code: on an enrolled phone it would bypass the factor.
    taken = call(admin, "PUT", f"/admin/v1/test-numbers/{number}", json={"code": "1234"})
    assert taken.status_code == 409 and taken.json()["code"] == "test_number_enrolled"
    uid = call(admin, "GET", "/admin/v1/users", params={"phone": "+" + number}).json()["users"][0]["id"]
    assert admin.outbox(number), "the enrollment code was texted"
    assert call(admin, "DELETE", f"/admin/v1/users/{uid}").status_code == 200
    assert admin.outbox(number) == [] and admin.outbox(email) == []
    erased = audit(admin, kind="admin.user_deleted")[-1]["detail"].split("user=")[1]
    trail = audit(admin, user=erased)
    assert trail and all("detail" not in e for e in trail if not e["kind"].startswith("admin."))


def test_delete_keeps_the_texts_of_a_number_another_account_holds_and_erases_an_unfinished_enrollment(admin):
    shared, unfinished = "447400765433", "447400765434"
    tokens = {}
    for email in ("shared-a@example.com", "shared-b@example.com"):
        admin.create_account(email, PASSWORD, "Shared")
        tokens[email] = token = admin.sign_in(email, PASSWORD)
        if email.startswith("shared-a"):
            # An enrollment started and never finished: its text holds the number too.
            admin.expect(202, "POST", "/v1/mfa/enrollments", {"kind": "phone", "phone": "+" + unfinished}, token=token)
            wait_until(lambda: any(m["status"] == "sent" for m in admin.outbox(unfinished)), "the unfinished enrollment's text to go out")
        session = admin.expect(202, "POST", "/v1/mfa/enrollments", {"kind": "phone", "phone": "+" + shared}, token=token)["enrollment_session"]
        wait_until(lambda: any(m["status"] == "sent" and m["text"] for m in admin.outbox(shared)), "the enrollment text to go out")
        admin.expect(201, "POST", f"/v1/mfa/enrollments/{session}", {"code": admin.code_for(shared)}, token=token)
    texts = len(admin.outbox(shared))
    uid = call(admin, "GET", "/admin/v1/users", params={"email": "shared-a@example.com"}).json()["users"][0]["id"]
    assert call(admin, "DELETE", f"/admin/v1/users/{uid}").status_code == 200
    assert admin.outbox(unfinished) == []
    # The other account still holds the number: its messages (and so the number) stay.
    assert len(admin.outbox(shared)) == texts and all(m["text"] for m in admin.outbox(shared))


def test_audit_query_validates_its_input(admin):
    assert call(admin, "GET", "/admin/v1/audit", params={"kind": "no.such"}).status_code == 422
    assert call(admin, "GET", "/admin/v1/audit", params={"since": "yesterday"}).status_code == 422
    # The API's own times (with milliseconds) are taken back as bounds.
    assert call(admin, "GET", "/admin/v1/audit", params={"since": "2026-01-01T10:00:00.123Z", "until": "2099-01-01T00:00:00Z"}).status_code == 200
    assert call(admin, "GET", "/admin/v1/audit", params={"limit": "0"}).status_code == 422
    page = call(admin, "GET", "/admin/v1/audit", params={"limit": 2}).json()
    assert len(page["entries"]) == 2 and page["next"] == page["entries"][-1]["seq"]
    after = call(admin, "GET", "/admin/v1/audit", params={"limit": 2, "after": page["next"]}).json()
    assert after["entries"][0]["seq"] > page["next"]
    assert call(admin, "GET", "/admin/v1/users", params={"email": "a@example.com", "id": "x"}).status_code == 422


def test_the_same_operations_on_the_host(admin):
    uid, _, token = user_with_totp(admin, "host@example.com")

    def cli(*args):
        return subprocess.run([admin.binary, "users", *args, "--database-url", admin.url], capture_output=True, text=True, timeout=30)

    found = cli("find", "--email", "host@example.com", "--json")
    assert found.returncode == 0 and json.loads(found.stdout)[0]["id"] == uid
    shown = cli("show", uid)
    assert shown.returncode == 0 and "totp" in shown.stdout and "session" in shown.stdout
    assert cli("revoke-sessions", uid).returncode == 0
    assert requests.get(admin.base_url + "/v1/session", headers={"Authorization": f"Bearer {token}"}, timeout=10).status_code == 401
    assert cli("disable", uid).returncode == 0
    assert admin.call("POST", "/v1/sessions", {"email": "host@example.com", "password": PASSWORD}).status_code == 403
    assert cli("enable", uid).returncode == 0
    assert cli("reset-mfa", uid).returncode == 0
    missing = cli("disable", "no-such-user")
    assert missing.returncode != 0 and "There is no user no-such-user" in missing.stderr
    bad = cli("find")
    assert bad.returncode != 0 and "exactly one of email, id or phone" in bad.stderr
    assert cli("delete", uid).returncode == 0
    assert cli("show", uid).returncode != 0
    hosts = [e for e in audit(admin, kind="admin.mfa_reset") if "admin=host:" in e.get("detail", "")]
    assert hosts, "the host's actions are audited under host:<login>"


def test_test_numbers_are_managed_through_the_admin_api(admin):
    number = "447400555123"
    # A read key lists, but cannot add or remove.
    assert call(admin, "PUT", f"/admin/v1/test-numbers/{number}", key="read", json={"code": "8642"}).status_code == 403
    assert call(admin, "DELETE", f"/admin/v1/test-numbers/{number}", key="read").status_code == 403
    listed = call(admin, "GET", "/admin/v1/test-numbers", key="read").json()["test_numbers"]
    assert {"number": "447400123999", "code": "1234", "source": "configuration"} in listed
    added = call(admin, "PUT", f"/admin/v1/test-numbers/{number}", json={"code": "8642"})
    assert added.status_code == 200 and added.json()["source"] == "admin", added.text
    # A start to it sends nothing, and its fixed code verifies.
    start = requests.post(admin.base_url + "/v2/verify", auth=(admin.api_key, admin.api_secret), timeout=10,
                          json={"brand": "Acme", "workflow": [{"channel": "sms", "to": number}]})
    assert start.status_code == 202, start.text
    assert admin.outbox(number) == []
    check = requests.post(admin.base_url + f"/v2/verify/{start.json()['request_id']}", json={"code": "8642"},
                          auth=(admin.api_key, admin.api_secret), timeout=10)
    assert check.status_code == 200, check.text
    # Bad input is refused with the fields named; the configuration's numbers are not the API's to change.
    bad = call(admin, "PUT", "/admin/v1/test-numbers/0123", json={"code": "x"})
    assert bad.status_code == 422 and {p["name"] for p in bad.json()["invalid_params"]} == {"number", "code"}
    assert call(admin, "PUT", "/admin/v1/test-numbers/447400123999", json={"code": "9999"}).json()["code"] == "test_number_configured"
    assert call(admin, "DELETE", f"/admin/v1/test-numbers/{number}").status_code == 204
    assert call(admin, "DELETE", f"/admin/v1/test-numbers/{number}").status_code == 404
    # Removed, the number is a real one again: a start to it sends a text.
    again = requests.post(admin.base_url + "/v2/verify", auth=(admin.api_key, admin.api_secret), timeout=10,
                          json={"brand": "Acme", "workflow": [{"channel": "sms", "to": number}]})
    assert again.status_code == 202 and admin.wait_message(number, "sms")
    kinds = [e["kind"] for e in audit(admin) if number in e.get("detail", "")]
    assert "admin.test_number_set" in kinds and "admin.test_number_removed" in kinds


def test_refused_keys_are_limited_per_client_and_a_live_key_still_works(admin):
    """Last in the file: it spends this client's budget of refused keys."""
    statuses = []
    for i in range(15):
        r = requests.get(admin.base_url + "/admin/v1/audit", headers={"Authorization": f"Bearer tfadm_{i:016x}_nope"}, timeout=10)
        statuses.append(r.status_code)
        if r.status_code == 429:
            assert int(r.headers["Retry-After"]) >= 1 and r.json()["code"] == "rate_limited"
    assert statuses[0] == 401 and statuses[-1] == 429, statuses
    # No key at all guesses nothing: past the budget it is still a 401, only no longer audited.
    assert requests.get(admin.base_url + "/admin/v1/audit", timeout=10).status_code == 401
    # Past the budget refusals are no longer written to the audit log, and a live key is never held back.
    assert call(admin, "GET", "/admin/v1/audit", params={"kind": "admin_key.rejected"}).status_code == 200
    rejected = [e for e in audit(admin, kind="admin_key.rejected") if e.get("detail", "").startswith("unknown key")]
    assert len(rejected) <= 10, len(rejected)
