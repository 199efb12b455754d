"""trifactord's SMS and voice adapters against fake Vonage and Twilio servers (fake_providers.py)
that check every field each provider's documentation requires: texts and calls in the
message's language, failover from one provider to the next, failures that end in an
audited `delivery.failed`, and delivery receipts signed the way the providers sign them,
checked with the providers' own published libraries (vonage's Auth.sign_params, twilio's
RequestValidator, PyJWT for Vonage's signed webhooks)."""

import hashlib
import json
import sqlite3
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import jwt
import pytest
import requests
from twilio.request_validator import RequestValidator
from vonage_http_client import Auth

from conftest import _binary, _Daemon, _run, free_port, sms_code, voice_code, wait_until
from fake_providers import FakeProviders, application_key

SIGNATURE_SECRET = "vonage signature secret, 32 bytes+"
APPLICATION_ID = str(uuid.uuid4())
TWILIO_SID = "AC" + "1" * 32
TWILIO_TOKEN = "twilio auth token"




class Stack:
    """trifactord with Vonage then Twilio, both served by the fakes."""

    def __init__(self, tmp: Path):
        key = tmp / "vonage-app.pem"
        public = application_key(key)
        self.fakes = FakeProviders(vonage_key="vkey", vonage_secret="vsecret", application_id=APPLICATION_ID, public_key_pem=public,
                                   twilio_sid=TWILIO_SID, twilio_token=TWILIO_TOKEN)
        for name, text in [("vonage-secret", "vsecret"), ("vonage-signature", SIGNATURE_SECRET), ("twilio-token", TWILIO_TOKEN)]:
            (tmp / name).write_text(text + "\n")
        fake = f"127.0.0.1:{self.fakes.port}"
        providers = (f"vonage://vkey@{fake}?from=Trifactor&secret_file={tmp / 'vonage-secret'}"
                     f"&signature_secret_file={tmp / 'vonage-signature'}&application_id={APPLICATION_ID}"
                     f"&private_key_file={key}&voice_from=447700900001,"
                     f"twilio://{TWILIO_SID}@{fake}?from=%2B15005550006&token_file={tmp / 'twilio-token'}")
        self.db = tmp / "t.db"
        database_url = f"sqlite:{self.db}"
        created = json.loads(_run([_binary(), "keys", "create", "--name", "providers", "--json", "--database-url", database_url]))
        self.auth = (created["api_key"], created["api_secret"])
        port = free_port()
        self.public = f"http://127.0.0.1:{port}"
        self.daemon = _Daemon(_binary(), ["--dev", "--listen", f"127.0.0.1:{port}", "--database-url", database_url,
                                          "--key-file", str(tmp / "k.key"), "--sms-provider", providers, "--public-url", self.public], tmp)
        self.base = f"http://127.0.0.1:{self.daemon.port}"

    def start(self, number, locale="en-us", channels=("sms", "voice")):
        r = requests.post(self.base + "/v2/verify", auth=self.auth, timeout=10,
                          json={"brand": "Acme", "locale": locale, "channel_timeout": 60,
                                "workflow": [{"channel": c, "to": number} for c in channels]})
        assert r.status_code == 202, r.text
        return r.json()["request_id"]

    def wait(self, predicate, what, timeout=10.0):
        return wait_until(predicate, f"{what} (refused by the fakes: {self.fakes.refused})", timeout, self.daemon.lines)

    def query(self, sql, *args):
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True) as db:
            return db.execute(sql, args).fetchall()

    def sent_ref(self, number, provider, channel):
        """The provider's id of the message it accepted for `number`, once the outbox recorded it."""
        self.wait(lambda: self.fakes.sent(provider, channel, number), f"a {provider} {channel}")
        (ref,) = self.wait(lambda: [r[0] for r in self.query(
            "SELECT provider_ref FROM outbox WHERE recipient = ? AND provider = ? AND status = 'sent'", number, provider)], "the sent message")
        return ref

    def audit(self, kind):
        return [row[0] for row in self.query("SELECT detail FROM audit_log WHERE kind = ? ORDER BY seq", kind)]


@pytest.fixture(scope="module")
def stack():
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-providers."))
    s = Stack(tmp)
    try:
        yield s
    finally:
        s.daemon.stop()
        s.fakes.stop()


def test_a_text_then_a_call_through_vonage_in_the_requests_language(stack):
    number = "447400123500"
    request_id = stack.start(number, locale="de-de")
    sms = stack.wait(lambda: stack.fakes.sent("vonage", "sms", number), "a Vonage SMS")[0]
    code = sms_code(sms["text"])
    assert "Bestätigungscode" in sms["text"] and "Acme" in sms["text"], sms["text"]
    assert sms["from"] == "Trifactor" and sms["type"] == "text" and sms["status-report-req"] == "1"
    assert sms["callback"] == stack.public + "/v1/delivery/vonage/sms" and sms["client-ref"]

    r = requests.post(f"{stack.base}/v2/verify/{request_id}/next_workflow", auth=stack.auth, timeout=10)
    assert r.status_code == 200, r.text
    call = stack.wait(lambda: stack.fakes.sent("vonage", "voice", number), "a Vonage call")[0]
    talk = call["ncco"][0]
    assert talk["action"] == "talk" and talk["language"] == "de-DE", talk
    assert voice_code(talk["text"]) == code and talk["text"].count(", ".join(code)) == 2, talk["text"]
    assert call["from"] == {"type": "phone", "number": "447700900001"}
    assert call["event_url"] == [stack.public + "/v1/delivery/vonage/voice"]

    r = requests.post(f"{stack.base}/v2/verify/{request_id}", auth=stack.auth, json={"code": code}, timeout=10)
    assert r.status_code == 200, r.text


def test_a_text_outside_gsm7_is_sent_as_unicode(stack):
    number = "447400123501"
    stack.start(number, locale="ru-ru", channels=("sms",))
    sms = stack.wait(lambda: stack.fakes.sent("vonage", "sms", number), "a Vonage SMS")[0]
    assert sms["type"] == "unicode" and any("\u0400" <= ch <= "\u04ff" for ch in sms["text"]), sms


@pytest.mark.parametrize("failure", ["down", "balance", "throttled"])
def test_when_vonage_fails_the_text_goes_to_twilio_once(stack, failure):
    number = {"down": "447400123502", "balance": "447400123503", "throttled": "447400123504"}[failure]
    stack.fakes.plan["vonage"][number] = failure
    stack.start(number, channels=("sms",))
    sms = stack.wait(lambda: stack.fakes.sent("twilio", "sms", number), "a Twilio SMS")[0]
    assert sms["To"] == "+" + number and sms["From"] == "+15005550006" and "Acme" in sms["Body"]
    assert sms["StatusCallback"] == stack.public + "/v1/delivery/twilio"
    assert stack.fakes.sent("vonage", "sms", number) == []
    time.sleep(0.3)
    assert len(stack.fakes.sent("twilio", "sms", number)) == 1
    assert any(f"provider_failover" in line and number not in line for line in stack.daemon.lines), "the failover is logged"


def test_a_call_fails_over_to_twilio_with_twiml_say_in_the_language(stack):
    number = "447400123505"
    stack.fakes.plan["vonage"][number] = "down"
    request_id = stack.start(number, locale="fr-fr", channels=("voice",))
    call = stack.wait(lambda: stack.fakes.sent("twilio", "voice", number), "a Twilio call")[0]
    assert call["From"] == "+15005550006" and '<Say language="fr-FR">' in call["Twiml"], call
    code = voice_code(call["Twiml"])
    r = requests.post(f"{stack.base}/v2/verify/{request_id}", auth=stack.auth, json={"code": code}, timeout=10)
    assert r.status_code == 200, r.text


def test_a_number_every_provider_refuses_ends_in_an_audited_failure_never_a_lost_message(stack):
    number = "447400123506"
    stack.fakes.plan["vonage"][number] = "invalid"
    stack.fakes.plan["twilio"][number] = "invalid"
    stack.start(number, channels=("sms",))
    rows = stack.wait(lambda: stack.query("SELECT status, last_error FROM outbox WHERE recipient = ? AND status = 'failed'", number),
                      "the message's failure")
    assert "vonage sms: status 3" in rows[0][1] and "twilio sms: HTTP 400 code 21211" in rows[0][1], rows
    assert any(number not in d and "sms" in d for d in stack.audit("delivery.failed"))
    assert stack.fakes.sent(to=number) == []


def test_signed_receipts_update_the_message_and_forged_ones_are_refused_and_audited(stack):
    number = "447400123507"
    stack.start(number, channels=("sms",))
    message_id = stack.sent_ref(number, "vonage", "sms")

    # Vonage's delivery receipt, signed with the account's signature secret by Vonage's own library.
    auth = Auth(api_key="vkey", signature_secret=SIGNATURE_SECRET, signature_method="sha256")
    receipt = {"msisdn": number, "to": "Trifactor", "network-code": "23410", "messageId": message_id, "price": "0.05",
               "status": "delivered", "scts": "2612011200", "err-code": "0", "api-key": "vkey",
               "message-timestamp": "2026-12-01 12:00:00", "timestamp": str(int(time.time())), "nonce": str(uuid.uuid4())}
    signed = dict(receipt, sig=auth.sign_params(dict(receipt)))
    url = stack.base + "/v1/delivery/vonage/sms"
    receipts = len(stack.audit("delivery.receipt"))
    assert requests.post(url, data=signed, timeout=10).status_code == 204
    assert stack.query("SELECT receipt_status FROM outbox WHERE provider_ref = ?", message_id) == [("delivered",)]
    assert len(stack.audit("delivery.receipt")) == receipts + 1
    # The same receipt again within its five minutes, by GET (Vonage may use it) or with the signature in
    # upper case, is answered 204 and taken no more: each receipt counts once, whatever its spelling.
    assert requests.get(url, params=signed, timeout=10).status_code == 204
    assert requests.post(url, data=dict(signed, sig=signed["sig"].upper()), timeout=10).status_code == 204
    assert len(stack.audit("delivery.receipt")) == receipts + 1

    refused_before = len(stack.audit("delivery.receipt_refused"))
    forged = dict(signed, status="failed")
    stale = dict(receipt, timestamp=str(int(time.time()) - 3600))
    stale["sig"] = auth.sign_params(dict(stale))
    for attempt in (receipt, forged, stale):
        r = requests.post(url, data=attempt, timeout=10)
        assert r.status_code == 403 and r.headers["Content-Type"].startswith("application/problem+json"), r.text
    assert stack.query("SELECT receipt_status FROM outbox WHERE provider_ref = ?", message_id) == [("delivered",)]
    refused = stack.audit("delivery.receipt_refused")[refused_before:]
    assert refused == ["vonage sms: unsigned", "vonage sms: signature does not match", "vonage sms: timestamp outside five minutes"]


def test_twilio_status_callbacks_are_checked_with_the_auth_token_and_an_undelivered_text_calls_at_once(stack):
    number = "447400123508"
    stack.fakes.plan["vonage"][number] = "down"
    stack.start(number, channels=("sms", "voice"))
    sid = stack.sent_ref(number, "twilio", "sms")
    url = stack.public + "/v1/delivery/twilio"
    params = {"AccountSid": TWILIO_SID, "MessageSid": sid, "MessageStatus": "undelivered", "ErrorCode": "30003", "To": "+" + number}
    signature = RequestValidator(TWILIO_TOKEN).compute_signature(url, params)
    r = requests.post(stack.base + "/v1/delivery/twilio", data=params, headers={"X-Twilio-Signature": signature}, timeout=10)
    assert r.status_code == 204, r.text
    assert stack.query("SELECT receipt_status FROM outbox WHERE provider_ref = ?", sid) == [("undelivered",)]
    assert any(sid in d and "error=30003" in d for d in stack.audit("delivery.receipt"))
    # The text will never arrive: the call goes now, not after the step's 60 seconds.
    call = stack.wait(lambda: stack.fakes.sent("twilio", "voice", number), "the call after the undelivered text", timeout=5)[0]
    assert "<Say" in call["Twiml"]
    wrong = RequestValidator("not the token").compute_signature(url, params)
    for headers in ({}, {"X-Twilio-Signature": wrong}):
        assert requests.post(stack.base + "/v1/delivery/twilio", data=params, headers=headers, timeout=10).status_code == 403
    # The genuine callback sent again (a retry, or a capture replayed: Twilio's carry no time) changes nothing.
    receipts = len(stack.audit("delivery.receipt"))
    again = requests.post(stack.base + "/v1/delivery/twilio", data=params, headers={"X-Twilio-Signature": signature}, timeout=10)
    assert again.status_code == 204 and len(stack.audit("delivery.receipt")) == receipts
    assert len(stack.fakes.sent("twilio", "voice", number)) == 1
    # Twilio signs the whole URL it called, query string included: a callback URL with a query verifies,
    # and a signature made for one query does not cover another.
    delivered = {**params, "MessageStatus": "delivered", "ErrorCode": ""}
    queried = RequestValidator(TWILIO_TOKEN).compute_signature(url + "?region=eu&n=1", delivered)
    r = requests.post(stack.base + "/v1/delivery/twilio?region=eu&n=1", data=delivered, headers={"X-Twilio-Signature": queried}, timeout=10)
    assert r.status_code == 204, r.text
    assert stack.query("SELECT receipt_status FROM outbox WHERE provider_ref = ?", sid) == [("delivered",)]
    for target in ("/v1/delivery/twilio", "/v1/delivery/twilio?region=us&n=1"):
        assert requests.post(stack.base + target, data=delivered, headers={"X-Twilio-Signature": queried}, timeout=10).status_code == 403


def test_vonage_voice_events_need_a_jwt_over_their_body(stack):
    number = "447400123509"
    stack.start(number, channels=("voice",))
    call_id = stack.sent_ref(number, "vonage", "voice")
    body = json.dumps({"uuid": call_id, "conversation_uuid": "CON-1", "status": "completed", "direction": "outbound",
                       "timestamp": "2026-12-01T12:00:00.000Z"}).encode()
    claims = {"iat": int(time.time()), "jti": str(uuid.uuid4()), "iss": "Vonage", "api_key": "vkey", "application_id": APPLICATION_ID,
              "payload_hash": hashlib.sha256(body).hexdigest()}
    token = jwt.encode(claims, SIGNATURE_SECRET, algorithm="HS256")
    url = stack.base + "/v1/delivery/vonage/voice"
    r = requests.post(url, data=body, headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"}, timeout=10)
    assert r.status_code == 204, r.text
    assert stack.query("SELECT receipt_status FROM outbox WHERE provider_ref = ?", call_id) == [("completed",)]
    # The same event again (a retry, or a capture replayed within its five minutes, however respelled) changes nothing.
    receipts = len(stack.audit("delivery.receipt"))
    for authorization in (f"Bearer {token}", f"BEARER {token}", f"Bearer  {token}=", f"bearer {token} "):
        r = requests.post(url, data=body, headers={"Content-Type": "application/json", "Authorization": authorization}, timeout=10)
        assert r.status_code == 204 and len(stack.audit("delivery.receipt")) == receipts, authorization
    tampered = body.replace(b"completed", b"failed")
    r = requests.post(url, data=tampered, headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"}, timeout=10)
    assert r.status_code == 403
    assert stack.query("SELECT receipt_status FROM outbox WHERE provider_ref = ?", call_id) == [("completed",)]
