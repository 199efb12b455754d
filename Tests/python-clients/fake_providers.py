"""Fake Vonage and Twilio servers for trifactord's SMS and voice adapters.

They implement the requests each provider documents, and refuse (with the
provider's own error shape) any request the real one would refuse:

- Vonage SMS API (https://developer.vonage.com/en/api/sms, `POST /sms/json`): form-encoded
  `api_key`, `api_secret`, `from`, `to` (digits, no +), `text`, `type` (`unicode` required
  for a text outside GSM-7), `client-ref` (<= 100 characters), `callback` with
  `status-report-req`. Answers 200 with a `messages` array whose `status` is `0` when
  accepted, `1` throttled, `3` invalid parameters (number), `4` invalid credentials,
  `9` partner quota violation (balance).
- Vonage Voice API (https://developer.vonage.com/en/api/voice, `POST /v1/calls`): a JWT
  bearer (RS256 under the application's key, with `application_id`, `iat`, `exp`, `jti`),
  JSON `to` [{type: phone, number}], `from` {type: phone, number}, `ncco` with a `talk`
  action (`text`, `language`), `event_url` [URL]. 201 with `uuid`; problems as JSON
  `{type, title, detail}` with 400, 401, 429, 5xx.
- Twilio REST API 2010-04-01 (https://www.twilio.com/docs/messaging/api/message-resource and
  https://www.twilio.com/docs/voice/api/call-resource): Basic auth by Account SID and auth
  token, form-encoded `To` (+E.164), `From` or `MessagingServiceSid`, `Body` (<= 1600
  characters) for Messages, `From` and `Twiml` (XML with `<Say>`) for Calls, optional
  `StatusCallback`. 201 with `sid`; errors as JSON `{code, message, more_info, status}`:
  21211 invalid To (400), 20003 authentication (401), 20429 too many requests (429),
  20005 account not active, e.g. out of funds (401).

`plan[number] = kind` makes the next requests to that number fail: "invalid",
"throttled", "balance", "down" (HTTP 503), applied per provider ("vonage" or "twilio").
"""

import base64
import json
import re
import threading
import urllib.parse
import uuid
import xml.etree.ElementTree as ET
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt

GSM7 = set("@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿"
           "abcdefghijklmnopqrstuvwxyzäöñüà^{}\\[~]|€")


def application_key(path) -> str:
    """Writes a Vonage application's RSA private key (PEM) to `path`; returns its public key (PEM)."""
    import subprocess
    subprocess.run(["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", str(path)], check=True, capture_output=True)
    return subprocess.run(["openssl", "pkey", "-in", str(path), "-pubout"], check=True, capture_output=True, text=True).stdout


class FakeProviders:
    def __init__(self, vonage_key="vkey", vonage_secret="vsecret", application_id=None, public_key_pem=None,
                 twilio_sid="AC" + "0" * 32, twilio_token="ttoken"):
        self.vonage_key, self.vonage_secret = vonage_key, vonage_secret
        self.application_id, self.public_key_pem = application_id, public_key_pem
        self.twilio_sid, self.twilio_token = twilio_sid, twilio_token
        self.plan = {"vonage": {}, "twilio": {}}
        self.accepted = []   # (provider, channel, fields) of accepted requests
        self.refused = []    # (provider, channel, reason) of refused requests
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                path = urllib.parse.urlparse(self.path).path
                if path == "/sms/json":
                    status, answer = fake.vonage_sms(self.headers, body)
                elif path == "/v1/calls":
                    status, answer = fake.vonage_call(self.headers, body)
                elif path == f"/2010-04-01/Accounts/{fake.twilio_sid}/Messages.json":
                    status, answer = fake.twilio("sms", self.headers, body)
                elif path == f"/2010-04-01/Accounts/{fake.twilio_sid}/Calls.json":
                    status, answer = fake.twilio("voice", self.headers, body)
                else:
                    status, answer = 404, {"title": "Not Found"}
                data = json.dumps(answer).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()

    def _refuse(self, provider, channel, reason):
        with self.lock:
            self.refused.append((provider, channel, reason))

    def _accept(self, provider, channel, fields):
        with self.lock:
            self.accepted.append((provider, channel, fields))

    def sent(self, provider=None, channel=None, to=None):
        with self.lock:
            return [f for p, c, f in self.accepted if (provider in (None, p)) and (channel in (None, c))
                    and (to is None or str(f.get("to", f.get("To", ""))).lstrip("+") == to
                         or (isinstance(f.get("to"), list) and f["to"][0]["number"] == to))]

    # Vonage SMS API

    def vonage_sms(self, headers, body):
        def problem(status, text):
            self._refuse("vonage", "sms", text)
            return 200, {"message-count": "1", "messages": [{"status": status, "error-text": text}]}

        if headers.get("Content-Type", "").split(";")[0] != "application/x-www-form-urlencoded":
            return problem("2", "Missing api_key: body must be form-encoded")
        fields = {k: v[0] for k, v in urllib.parse.parse_qs(body.decode(), keep_blank_values=True).items()}
        for name in ("api_key", "api_secret", "from", "to", "text"):
            if not fields.get(name):
                return problem("2", f"Missing {name}")
        if fields["api_key"] != self.vonage_key or fields["api_secret"] != self.vonage_secret:
            return problem("4", "Bad Credentials")
        if not re.fullmatch(r"\d{7,15}", fields["to"]):
            return problem("3", "Invalid to address: digits in international format without + or 00")
        needs_unicode = any(ch not in GSM7 for ch in fields["text"])
        if fields.get("type", "text") not in ("text", "unicode") or (needs_unicode and fields.get("type") != "unicode"):
            return problem("3", "Invalid type: a text outside GSM-7 needs type=unicode")
        if len(fields.get("client-ref", "")) > 100:
            return problem("3", "client-ref is longer than 100 characters")
        if "callback" in fields and (fields.get("status-report-req") != "1" or not fields["callback"].startswith(("http://", "https://"))):
            return problem("23", "Invalid callback url")
        plan = self.plan["vonage"].get(fields["to"])
        if plan == "down":
            self._refuse("vonage", "sms", "down")
            return 503, {"error": "service unavailable"}
        if plan in ("invalid", "throttled", "balance"):
            return problem({"invalid": "3", "throttled": "1", "balance": "9"}[plan],
                           {"invalid": "Invalid to address", "throttled": "Throughput Rate Exceeded",
                            "balance": "Partner quota violation: insufficient balance"}[plan])
        self._accept("vonage", "sms", fields)
        return 200, {"message-count": "1", "messages": [{
            "to": fields["to"], "message-id": str(uuid.uuid4()), "status": "0", "remaining-balance": "10.00",
            "message-price": "0.05", "network": "23410", "client-ref": fields.get("client-ref", "")}]}

    # Vonage Voice API

    def vonage_call(self, headers, body):
        def problem(status, title, detail):
            self._refuse("vonage", "voice", f"{status} {title}: {detail}")
            return status, {"type": "https://developer.nexmo.com/api-errors#" + title.lower().replace(" ", "-"), "title": title, "detail": detail}

        auth = headers.get("Authorization", "")
        if not auth.startswith("Bearer "):
            return problem(401, "Unauthorized", "a JWT bearer is required")
        try:
            claims = jwt.decode(auth[7:], self.public_key_pem, algorithms=["RS256"], options={"require": ["iat", "exp", "jti"]})
        except jwt.PyJWTError as e:
            return problem(401, "Unauthorized", f"invalid JWT: {e}")
        if claims.get("application_id") != self.application_id:
            return problem(401, "Unauthorized", "wrong application_id")
        if headers.get("Content-Type", "").split(";")[0] != "application/json":
            return problem(415, "Unsupported Media Type", "JSON required")
        try:
            call = json.loads(body)
            to, frm, ncco = call["to"], call["from"], call["ncco"]
            assert isinstance(to, list) and len(to) == 1 and to[0]["type"] == "phone" and re.fullmatch(r"\d{7,15}", to[0]["number"])
            assert frm["type"] == "phone" and re.fullmatch(r"\d{7,15}", frm["number"])
            talk = [a for a in ncco if a.get("action") == "talk"]
            assert talk and talk[0]["text"] and re.fullmatch(r"[a-z]{2,3}-[A-Z]{2}", talk[0]["language"])
            if "event_url" in call:
                assert isinstance(call["event_url"], list) and call["event_url"][0].startswith(("http://", "https://"))
                assert call.get("event_method", "POST") in ("POST", "GET")
        except (ValueError, KeyError, TypeError, AssertionError, IndexError) as e:
            return problem(400, "Bad Request", f"invalid call: {e!r}")
        plan = self.plan["vonage"].get(to[0]["number"])
        if plan == "down":
            return problem(503, "Service Unavailable", "try later")
        if plan == "throttled":
            return problem(429, "Too Many Requests", "rate limit")
        if plan == "invalid":
            return problem(400, "Bad Request", "invalid number")
        if plan == "balance":
            return problem(402, "Low balance", "insufficient credit")
        self._accept("vonage", "voice", call)
        return 201, {"uuid": str(uuid.uuid4()), "status": "started", "direction": "outbound", "conversation_uuid": "CON-" + str(uuid.uuid4())}

    # Twilio REST API

    def twilio(self, channel, headers, body):
        def problem(status, code, message):
            self._refuse("twilio", channel, f"{code} {message}")
            return status, {"code": code, "message": message, "more_info": f"https://www.twilio.com/docs/errors/{code}", "status": status}

        expected = "Basic " + base64.b64encode(f"{self.twilio_sid}:{self.twilio_token}".encode()).decode()
        if headers.get("Authorization") != expected:
            return problem(401, 20003, "Authenticate")
        if headers.get("Content-Type", "").split(";")[0] != "application/x-www-form-urlencoded":
            return problem(400, 21200, "form-encoded parameters required")
        fields = {k: v[0] for k, v in urllib.parse.parse_qs(body.decode(), keep_blank_values=True).items()}
        if not re.fullmatch(r"\+\d{7,15}", fields.get("To", "")):
            return problem(400, 21211, f"The 'To' number {fields.get('To')} is not a valid phone number.")
        if channel == "sms":
            if not fields.get("From") and not fields.get("MessagingServiceSid"):
                return problem(400, 21603, "A 'From' or 'MessagingServiceSid' parameter is required")
            if not fields.get("Body") or len(fields["Body"]) > 1600:
                return problem(400, 21602, "Message body is required and at most 1600 characters")
        else:
            if not re.fullmatch(r"\+\d{7,15}", fields.get("From", "")):
                return problem(400, 21212, "Invalid From number (caller ID)")
            try:
                say = ET.fromstring(fields["Twiml"]).find("Say")
                assert say is not None and say.text and re.fullmatch(r"[a-z]{2,3}-[A-Z]{2}", say.get("language", ""))
            except (KeyError, ET.ParseError, AssertionError) as e:
                return problem(400, 12100, f"Document parse failure: {e!r}")
        if "StatusCallback" in fields and not fields["StatusCallback"].startswith(("http://", "https://")):
            return problem(400, 21609, "Invalid StatusCallback")
        plan = self.plan["twilio"].get(fields["To"].lstrip("+"))
        if plan == "down":
            return problem(503, 20500, "Internal Server Error")
        if plan == "throttled":
            return problem(429, 20429, "Too Many Requests")
        if plan == "invalid":
            return problem(400, 21211, "The 'To' number is not a valid phone number.")
        if plan == "balance":
            return problem(401, 20005, "Account not active")
        self._accept("twilio", channel, fields)
        prefix = "SM" if channel == "sms" else "CA"
        return 201, {"sid": prefix + uuid.uuid4().hex, "status": "queued", "to": fields["To"], "account_sid": self.twilio_sid}
