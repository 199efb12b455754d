"""The API contract, Sources/TrifactorServer/Resources/openapi.json, against itself and against a live trifactord.

1. It is a valid OpenAPI 3.1 document, and the server serves exactly this file at GET /openapi.json.
2. Every example in it fits its schema.
3. schemathesis (its examples, coverage, fuzzing and stateful phases, the last following the document's links)
   finds no server error, no undocumented status, and no answer whose content type, headers or body the
   document does not describe; secured operations refuse requests without credentials.
4. A journey through every flow (sign-up to admin deletion, every factor, the phone verification API, signed
   delivery callbacks, the HTTP layer's refusals) checks each answer against the document, and sees every
   success the document promises.

The server is trifactord in dev mode over plain HTTP, with an API key for /v2/verify, admin keys, a metrics
token, and message providers at an address where nothing listens (so the delivery-callback routes exist;
texts to them fail and are retried, which the contract does not care about). Rate limits are raised so that
the runs reach past them; the 429s still answer when a bucket does run dry. Bearer operations of the fuzz run
get a session of a verified user without second factors, signed in again whenever a token stops working (a
fuzzed sign-out ends it). OPENAPI_SEED picks another seed, OPENAPI_MAX_EXAMPLES another budget per operation,
and OPENAPI_VERBOSE=1 prints the statuses of each operation.
"""

import base64
import hashlib
import hmac
import json
import os
import re
import secrets
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest
import requests

from conftest import Server, _binary, _Daemon, _run, free_port

DOCUMENT = Path(__file__).resolve().parents[2] / "Sources" / "TrifactorServer" / "Resources" / "openapi.json"
SEED = int(os.environ.get("OPENAPI_SEED", "20261201"))
MAX_EXAMPLES = int(os.environ.get("OPENAPI_MAX_EXAMPLES", "50"))
TWILIO_SID = "AC" + "0f" * 16
CHECKS = ["not_a_server_error", "status_code_conformance", "content_type_conformance", "response_schema_conformance",
          "response_headers_conformance", "unsupported_method", "ignored_auth"]
# `DELETE /v1/sessions/{id}` also matches `/v1/sessions/mfa`, `…/push` and `…/passkey` (a session could be named so):
# the server routes DELETE there to the revocation, and lists it in those paths' `Allow`, which OpenAPI cannot say of a
# concrete path. So allow_header_conformance is left out, and unsupported_method's DELETE on them is expected.
OVERLAPPING = re.compile(r"-X DELETE .*/v1/sessions/(mfa|push|passkey)$")


def load_document() -> dict:
    with open(DOCUMENT, encoding="utf-8") as f:
        return json.load(f)


class Contract:
    """The document's schemas, resolvable wherever they sit, and what it says of each operation's answers."""

    BASE = "urn:trifactor:openapi"

    def __init__(self, document: dict):
        from jsonschema import Draft202012Validator
        from referencing import Registry, Resource
        from referencing.jsonschema import DRAFT202012

        self.document = document
        self.validator = Draft202012Validator
        self.registry = Registry().with_resource(self.BASE, Resource.from_contents(self._absolute(document),
                                                                                  default_specification=DRAFT202012))
        self.operations = {o["operationId"]: (method.upper(), path, o)
                           for path, item in document["paths"].items() for method, o in item.items()}
        self.ids = {f"{method} {path}": opid for opid, (method, path, _) in self.operations.items()}

    def _absolute(self, node):
        """`node` with its local references (`#/components/…`) pointing into the registered document."""
        if isinstance(node, dict):
            return {k: (self.BASE + v if k == "$ref" and isinstance(v, str) and v.startswith("#") else self._absolute(v))
                    for k, v in node.items()}
        if isinstance(node, list):
            return [self._absolute(v) for v in node]
        return node

    def deref(self, node):
        while isinstance(node, dict) and set(node) == {"$ref"}:
            target = self.document
            for part in node["$ref"][2:].split("/"):
                target = target[part.replace("~1", "/").replace("~0", "~")]
            node = target
        return node

    def errors(self, schema, value) -> list:
        v = self.validator(self._absolute(schema), registry=self.registry, format_checker=self.validator.FORMAT_CHECKER)
        found = sorted(v.iter_errors(value), key=lambda e: list(map(str, e.absolute_path)))
        return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:300]}" for e in found]

    def examples(self):
        """(where, schema, value) of every example: of media types, parameters and headers, and schemas' own `examples`."""

        def of_container(where, container, schema):
            if "example" in container:
                yield f"{where} example", schema, container["example"]
            for name, e in container.get("examples", {}).items():
                e = self.deref(e)
                if "value" in e:
                    yield f"{where} examples.{name}", schema, e["value"]

        def of_schema(where, schema):
            if not isinstance(schema, dict):
                return
            for i, value in enumerate(schema.get("examples", []) if isinstance(schema.get("examples"), list) else []):
                yield f"{where} examples[{i}]", schema, value
            for key, sub in schema.items():
                if key in ("properties", "$defs", "patternProperties", "dependentSchemas"):
                    for name, s in sub.items():
                        yield from of_schema(f"{where}.{key}.{name}", s)
                elif key in ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames"):
                    yield from of_schema(f"{where}.{key}", sub)
                elif key in ("allOf", "anyOf", "oneOf", "prefixItems"):
                    for i, s in enumerate(sub):
                        yield from of_schema(f"{where}.{key}[{i}]", s)

        for path, item in self.document["paths"].items():
            for method, o in item.items():
                where = f"{method.upper()} {path}"
                for p in map(self.deref, o.get("parameters", [])):
                    yield from of_container(f"{where} parameter {p['name']}", p, p["schema"])
                    yield from of_schema(f"{where} parameter {p['name']} schema", p["schema"])
                for media, c in o.get("requestBody", {}).get("content", {}).items():
                    yield from of_container(f"{where} body {media}", c, c["schema"])
                    yield from of_schema(f"{where} body {media} schema", c["schema"])
                for status, r in o["responses"].items():
                    r = self.deref(r)
                    for name, h in r.get("headers", {}).items():
                        h = self.deref(h)
                        yield from of_container(f"{where} {status} header {name}", h, h["schema"])
                    for media, c in r.get("content", {}).items():
                        yield from of_container(f"{where} {status} {media}", c, c["schema"])
                        yield from of_schema(f"{where} {status} {media} schema", c["schema"])
        components = self.document.get("components", {})
        for name, schema in components.get("schemas", {}).items():
            yield from of_schema(f"#/components/schemas/{name}", schema)
        for kind in ("parameters", "headers"):
            for name, c in components.get(kind, {}).items():
                yield from of_container(f"#/components/{kind}/{name}", c, c["schema"])

    def violations(self, opid: str, response: requests.Response) -> list:
        """How `response` to operation `opid` departs from the document: status, headers, content type, body."""
        _, _, o = self.operations[opid]
        documented = o["responses"].get(str(response.status_code))
        if documented is None:
            return [f"status {response.status_code} is not documented (documented: {', '.join(o['responses'])})"]
        documented = self.deref(documented)
        problems = []
        for name, header in documented.get("headers", {}).items():
            header = self.deref(header)
            value = response.headers.get(name)
            if value is None:
                problems += [f"header {name} is missing"] if header.get("required") else []
            else:
                problems += [f"header {name}: {e}" for e in self.errors(header["schema"], value)]
        content = documented.get("content")
        given = response.headers.get("Content-Type") or ""
        if not content:
            return problems + ([f"a body ({given}) where the document has none"] if response.content else [])
        media = next((key for key in content if self._matches(key, given)), None)
        if media is None:
            return problems + [f"Content-Type {given!r} is not documented ({', '.join(content)})"]
        if not self._parts(media)[0].endswith("json"):
            return problems + self.errors(content[media]["schema"], response.text)
        try:
            body = response.json()
        except ValueError:
            return problems + ["the body is not JSON"]
        return problems + self.errors(content[media]["schema"], body)

    @staticmethod
    def _parts(media_type):
        essence, *parameters = [p.strip().lower() for p in media_type.split(";")]
        return essence, {p.replace(" ", "") for p in parameters if p}

    @classmethod
    def _matches(cls, documented, given):
        """`given` is the documented type (whose parameters, if it names any, `given` all carries)."""
        (essence, parameters), (given_essence, given_parameters) = cls._parts(documented), cls._parts(given)
        return essence == given_essence and parameters <= given_parameters


def start_contract_server():
    """trifactord for the contract tests; returns the server, its daemon and its directory."""
    tmp = Path(tempfile.mkdtemp(prefix="trifactor-openapi."))
    database_url = f"sqlite:{tmp / 't.db'}"
    created = json.loads(_run([_binary(), "keys", "create", "--name", "openapi", "--json", "--database-url", database_url]))
    admin = {role: json.loads(_run([_binary(), "admin-keys", "create", "--name", f"openapi-{role}", "--role", role, "--json",
                                    "--database-url", database_url]))["token"] for role in ("read", "write")}
    # The fuzz run spends its read key's budget of refused writes (429 past it): the journey has a read key of its own.
    admin["journey-read"] = json.loads(_run([_binary(), "admin-keys", "create", "--name", "openapi-journey-read", "--role", "read",
                                             "--json", "--database-url", database_url]))["token"]
    for name in ("vonage-secret", "vonage-signature", "twilio-token", "metrics-token"):
        (tmp / name).write_text(secrets.token_hex(16) + "\n")
    nowhere = f"127.0.0.1:{free_port()}"  # nothing listens: texts and calls fail and are retried
    providers = (f"vonage://vkey@{nowhere}?from=Trifactor&secret_file={tmp / 'vonage-secret'}"
                 f"&signature_secret_file={tmp / 'vonage-signature'},"
                 f"twilio://{TWILIO_SID}@{nowhere}?from=%2B15005550006&token_file={tmp / 'twilio-token'}")
    port = free_port()
    daemon = _Daemon(_binary(), [
        "--dev", "--listen", f"127.0.0.1:{port}", "--database-url", database_url, "--key-file", str(tmp / "k.key"),
        "--sms-provider", providers, "--public-url", f"http://127.0.0.1:{port}", "--metrics-token-file", str(tmp / "metrics-token"),
        # Cheap password hashing, and limits far above what the runs spend.
        "--argon2-opslimit", "1", "--argon2-memory-kib", "64",
        "--signin-ip-burst", "100000", "--signin-ip-rate", "1000", "--signup-ip-burst", "100000", "--signup-ip-rate", "1000",
        "--resend-burst", "1000", "--lockout-free-attempts", "1000", "--verify-ip-burst", "100000", "--verify-ip-rate", "1000",
        "--verify-number-burst", "1000", "--verify-key-burst", "100000",
        # The two verifications the journey cancels: test numbers send nothing, so no failed text moves them on.
        "--test-numbers", "447400123460=1234,447400123464=1234",
    ], tmp)
    srv = Server(process=daemon.process, port=daemon.port, api_key=created["api_key"], api_secret=created["api_secret"], cert=None,
                 lines=daemon.lines, lock=daemon.lock, scheme="http")
    srv.secrets = {name: (tmp / name).read_text().strip() for name in ("vonage-signature", "twilio-token", "metrics-token")}
    srv.public_url = f"http://127.0.0.1:{port}"
    srv.database_path = tmp / "t.db"
    srv.key_file = tmp / "k.key"
    srv.admin = admin  # the fuzz run gets the read key (its writes answer 403); the journey the write key
    # Cancelling is refused within a verification's first 30 seconds: the journey cancels one of these, and fires the
    # other's second step before trying to cancel it.
    srv.verifications = []
    for number in ("447400123460", "447400123464"):
        r = requests.post(srv.base_url + "/v2/verify", auth=(srv.api_key, srv.api_secret), timeout=10,
                          json={"brand": "Acme", "workflow": [{"channel": "sms", "to": number}, {"channel": "voice", "to": number}],
                                "channel_timeout": 900})
        assert r.status_code == 202, r.text
        srv.verifications.append(r.json()["request_id"])
    srv.verifications_started = time.monotonic()
    return srv, daemon, tmp


@pytest.fixture(scope="module")
def contract_server():
    srv, daemon, tmp = start_contract_server()
    try:
        yield srv
    finally:
        daemon.close(srv, tmp)


# --- 1. A valid document, and the one the server serves ---------------------------------------------------------------


def test_the_document_is_valid_openapi_3_1():
    from openapi_spec_validator import validate
    from openapi_spec_validator.versions import consts, get_spec_version

    document = load_document()
    assert get_spec_version(document) == consts.OPENAPIV31
    validate(document)


def test_the_server_serves_the_document_in_the_repository(contract_server):
    r = requests.get(contract_server.base_url + "/openapi.json", timeout=10)
    assert r.status_code == 200, f"GET /openapi.json -> {r.status_code} {r.text[:300]}"
    assert r.headers.get("Content-Type", "").split(";")[0] == "application/json", r.headers
    assert r.content == DOCUMENT.read_bytes(), "the served document differs from the file in the repository (rebuild trifactord?)"


def test_operation_ids_are_unique_links_resolve_and_no_dev_page_is_described():
    document = load_document()
    ids = Counter(o["operationId"] for item in document["paths"].values() for o in item.values())
    assert not [i for i, n in ids.items() if n > 1], ids
    assert not [p for p in document["paths"] if p.startswith(("/dev/", "/static/", "/sitekeys/"))]
    for item in document["paths"].values():
        for o in item.values():
            for response in o["responses"].values():
                for name, link in response.get("links", {}).items():
                    assert link["operationId"] in ids, (o["operationId"], name)


# --- 2. Every example fits its schema ------------------------------------------------------------------------------


def test_every_example_fits_its_schema():
    contract = Contract(load_document())
    checked, wrong = 0, []
    for where, schema, value in contract.examples():
        checked += 1
        wrong += [f"{where}: {e}" for e in contract.errors(schema, value)]
    print(f"\n{checked} examples checked")
    assert checked > 300, checked
    assert not wrong, "examples that do not fit their schema:\n" + "\n".join(wrong)


# --- 3. schemathesis against the live server -------------------------------------------------------------------------


class FuzzUser:
    """A verified user without second factors, signed in whenever the fuzz run needs a session."""

    def __init__(self, server: Server):
        self.server = server
        self.email = f"contract-{secrets.token_hex(6)}@example.org"
        self.password = "fuzz " + secrets.token_urlsafe(18)
        server.create_account(self.email, self.password, "Contract Test")
        self.sign_ins = 0

    def token(self) -> str:
        r = requests.post(self.server.base_url + "/v1/sessions", json={"email": self.email, "password": self.password}, timeout=10)
        assert r.status_code == 201, f"sign-in for the fuzz run -> {r.status_code} {r.text[:300]}"
        self.sign_ins += 1
        return r.json()["token"]


LINKED_TOKEN = re.compile(r"^Bearer [A-Za-z0-9_-]{43}$")


def _schemes(operation) -> set:
    return {name for requirement in operation.definition.raw.get("security", []) for name in requirement}


def _fuzz_schema(server: Server, user: FuzzUser):
    import hypothesis.configuration
    import schemathesis
    from schemathesis.config import SchemathesisConfig

    # Hypothesis keeps its files in the working directory (the repository) unless told otherwise.
    hypothesis.configuration.set_hypothesis_home_dir(tempfile.mkdtemp(prefix="trifactor-hypothesis."))
    config = SchemathesisConfig.from_dict({
        "seed": SEED,
        "workers": 1,  # two workers trip a thread-safety bug of the Python AST module in schemathesis' generators
        "request-timeout": 30,
        "cache": {"enabled": False},
        "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "database": "none"},
        "checks": {"enabled": False, **{name: {"enabled": True} for name in CHECKS}},
        "phases": {"examples": {"enabled": True}, "coverage": {"enabled": True}, "fuzzing": {"enabled": True},
                   "stateful": {"enabled": True, "max-steps": 8}},
    })
    schema = schemathesis.openapi.from_path(DOCUMENT, config=config)
    schema.config.update(base_url=server.base_url)
    credentials = {
        "apiKey": "Basic " + base64.b64encode(f"{server.api_key}:{server.api_secret}".encode()).decode(),
        "metricsToken": f"Bearer {server.secrets['metrics-token']}",
        "adminKey": f"Bearer {server.admin['read']}",
    }

    def scheme(operation):
        return next((name for name in ("sessionToken", *credentials) if name in _schemes(operation)), None)

    class Credentials:
        """The fuzz user's session for `sessionToken` operations, and the server's keys for the others. A session token
        a link carries (`Bearer <43 characters>`) is kept: the stateful run then acts as the user the link signed in."""

        def get(self, case, context):
            name = scheme(context.operation)
            if name == "sessionToken":
                return name, f"Bearer {user.token()}"
            return (name, credentials[name]) if name else None

        def set(self, case, data, context):
            name, value = data
            current = case.headers.get("Authorization") if case.headers else None
            if name == "sessionToken" and current and LINKED_TOKEN.match(current):
                return
            case.headers = case.headers or {}
            case.headers["Authorization"] = value

    # A 401 (a fuzzed sign-out ended the session) fetches a new token.
    schema.auth(refresh_interval=600, cache_by_key=lambda case, context: scheme(context.operation) or "none")(Credentials)
    return schema


def _failures(event, failures: list, seen: set):
    """The failed checks of a scenario, once each, with how to reproduce them and what the server answered."""
    recorder = event.recorder
    for case_id, nodes in recorder.checks.items():
        for node in nodes:
            info = node.failure_info
            if info is None:
                continue
            failure = info.failure
            operation = failure.operation or recorder.label
            if node.name == "unsupported_method" and OVERLAPPING.search(info.code_sample.strip()):
                continue
            key = (node.name, failure.title, operation, failure.message[:120])
            if key in seen:
                continue
            seen.add(key)
            interaction = recorder.interactions.get(case_id)
            answered = ""
            if interaction is not None and interaction.response is not None:
                body = (interaction.response.content or b"")[:400].decode("utf-8", "replace")
                answered = f"\n    answered: {interaction.response.status_code} {body}"
            failures.append(f"[{node.name}] {operation}: {failure.title}\n    {failure.message.strip()[:600]}"
                            f"\n    reproduce: {info.code_sample.strip()}{answered}")


def test_the_live_server_keeps_the_contract(contract_server):
    from schemathesis.engine import events, from_schema
    from schemathesis.engine.run import PhaseName

    started = time.monotonic()
    user = FuzzUser(contract_server)
    failures, seen, errors = [], set(), []
    cases, operations, statuses, per_phase, per_operation = 0, set(), Counter(), Counter(), {}
    stop = None
    for event in from_schema(_fuzz_schema(contract_server, user)).execute():
        if isinstance(event, events.ScenarioFinished) and event.is_test_scenario:
            recorder = event.recorder
            cases += len(recorder.cases)
            per_phase[event.phase.value] += len(recorder.cases)
            for case_id, interaction in recorder.interactions.items():
                if interaction.response is not None:
                    statuses[interaction.response.status_code] += 1
                    node = recorder.cases.get(case_id)
                    label = node.value.operation.label if node is not None else recorder.label
                    per_operation.setdefault(label, Counter())[interaction.response.status_code] += 1
            if event.phase != PhaseName.STATEFUL_TESTING and recorder.interactions:
                operations.add(event.label)
            _failures(event, failures, seen)
        elif isinstance(event, events.NonFatalError):
            errors.append(f"{event.label}: {event.info.title}: {event.info.message[:500]}")
        elif isinstance(event, events.FatalError):
            raise event.exception
        elif isinstance(event, events.EngineFinished):
            stop = event.stop_reason
    documented = {f"{m.upper()} {p}" for p, item in load_document()["paths"].items() for m in item}
    print(f"\nschemathesis: seed {SEED}, {MAX_EXAMPLES} examples per operation, stopped: {stop}, {time.monotonic() - started:.0f} s")
    print(f"  operations tested: {len(operations)} of {len(documented)}; cases generated: {cases} "
          f"({', '.join(f'{k} {v}' for k, v in sorted(per_phase.items()))})")
    print(f"  statuses answered: {dict(sorted(statuses.items()))}")
    print(f"  failures: {len(failures)}; errors: {len(errors)}; sign-ins of the fuzz user: {user.sign_ins}")
    if os.environ.get("OPENAPI_VERBOSE"):
        for label in sorted(per_operation):
            print(f"    {label}: {dict(sorted(per_operation[label].items()))}")
    for line in failures + [f"error: {e}" for e in errors]:
        print("  " + line)
    assert not failures, f"{len(failures)} ways the server and the document disagree:\n" + "\n".join(failures)
    assert not errors, "schemathesis could not test some operations:\n" + "\n".join(errors)
    assert not documented - operations, f"operations never tested: {sorted(documented - operations)}"


# --- 4. Every flow, each answer checked against the document ---------------------------------------------------------


class Journey:
    """A client of the contract server that checks every answer against the document, and notes which it saw."""

    def __init__(self, server: Server, contract: Contract):
        self.server = server
        self.contract = contract
        self.http = requests.Session()
        self.seen = set()  # (operationId, status) of the answers that kept to the document
        self.disagreements = []  # the answers that did not (the journey goes on)

    def call(self, operation, path_params=None, *, json_body=None, data=None, token=None, headers=None, query=None, auth=None,
             raw_path=None):
        """`operation` is an operationId, or `METHOD /path/{template}`."""
        opid = self.contract.ids.get(operation, operation)
        method, template, _ = self.contract.operations[opid]
        path = raw_path or template.format(**(path_params or {}))
        all_headers = {**(headers or {}), **({"Authorization": f"Bearer {token}"} if token else {})}
        r = self.http.request(method, self.server.base_url + path, json=json_body, data=data, headers=all_headers, params=query,
                              auth=auth, timeout=30)
        problems = self.contract.violations(opid, r)
        if problems:
            shown = path if len(path) < 200 else f"{path[:100]}…({len(path)} characters)"
            self.disagreements.append(f"{method} {shown} -> {r.status_code} {r.headers.get('Content-Type')} {r.text[:300]!r}\n      "
                                      + "\n      ".join(problems))
        else:
            self.seen.add((opid, r.status_code))
        return r

    def expect(self, status, operation, path_params=None, **kw):
        """The answer's JSON (None when it has none), asserting its status."""
        r = self.call(operation, path_params, **kw)
        assert r.status_code == status, f"{operation} {path_params or ''} -> {r.status_code} {r.text[:500]} (expected {status})"
        return r.json() if r.content and "json" in r.headers.get("Content-Type", "") else None

    def problem(self, status, code, operation, path_params=None, **kw):
        body = self.expect(status, operation, path_params, **kw)
        assert body is not None and body.get("code") == code, f"{operation} -> {status} {body} (expected {code})"
        return body


class DeviceKey:
    """A P-256 device key, signing `trifactor-device-signature-v1` messages."""

    def __init__(self):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        self.key = ec.generate_private_key(ec.SECP256R1())
        der = self.key.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        self.public_key = base64.b64encode(der).decode()
        self.id = None

    def sign(self, purpose, challenge, action=None):
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec

        message = f"trifactor-device-signature-v1\npurpose: {purpose}\nchallenge: {challenge}\naction: {action or '-'}".encode()
        return base64.b64encode(self.key.sign(message, ec.ECDSA(hashes.SHA256()))).decode()

    def headers(self):
        now = str(int(time.time()))
        return {"X-Trifactor-Device-Time": now, "X-Trifactor-Device-Signature": self.sign("poll", f"{self.id}:{now}")}

    def approve(self, approval_id, number):
        return {"decision": "approve", "number": number, "signature": self.sign("push", approval_id, f"approve:{number}")}


class Authenticator:
    """An authenticator app (pyotp) that never repeats a time step: the server takes the step before, the current one
    and the next, and refuses a step at or before the last it accepted."""

    def __init__(self, secret):
        import pyotp

        self.totp = pyotp.TOTP(secret)
        self.last = None

    def code(self):
        while True:
            step = int(time.time()) // 30
            for candidate in (step - 1, step, step + 1):
                if self.last is None or candidate > self.last:
                    self.last = candidate
                    return self.totp.at(candidate * 30)
            time.sleep(1)


def _code_in(server, to, channel, after=()):
    """The 6-digit code of the newest `channel` message to `to` in the dev outbox, and the message's id."""
    message = server.wait_message(to, channel, timeout=5, exclude_ids=after)
    m = re.search(r"(?<!\d)\d{6}(?!\d)", message["text"])
    assert m, message
    return m.group(0), message["id"]


def test_every_flow_keeps_the_contract(contract_server):
    server, j = contract_server, Journey(contract_server, Contract(load_document()))
    user = {"email": f"journey-{secrets.token_hex(6)}@example.org", "password": "journey " + secrets.token_urlsafe(12)}
    _probes(server, j)
    token = _account(server, j, user)
    factors = _enroll_every_factor(server, j, user, token)
    aal2 = _second_steps(server, j, user, factors)
    _passwordless(server, j, user, factors)
    _bound_actions(j, factors, aal2)
    _ending_sessions(j, factors, token, aal2)
    _password_reset(server, j, user, factors)
    _phone_verification(server, j)
    _delivery_callbacks(server, j)
    _admin(server, j, user)
    _admin_clients(j)
    _admin_webhooks(j)
    _http_layer(j)
    _database_outage(server, j)

    # Every 2xx the document promises was answered: a success nobody can reach is a document that is wrong.
    promised = {(o["operationId"], int(status)) for item in load_document()["paths"].values() for o in item.values()
                for status in o["responses"] if status.startswith("2")}
    missing = sorted(promised - j.seen - {("getReadiness", 503)})  # a 503 of /ready needs a database that is down
    print(f"\njourney: {len(j.seen)} (operation, status) pairs answered as documented, {len(promised)} documented successes; "
          f"disagreements: {len(j.disagreements)}")
    for line in j.disagreements:
        print("  " + line)
    if missing:
        print(f"  documented successes never answered as documented: {missing}")
    assert not j.disagreements, "answers that do not keep to the document:\n  " + "\n  ".join(j.disagreements)
    assert not missing, f"documented successes never answered as documented: {missing}"


def _probes(server, j):
    from prometheus_client.parser import text_string_to_metric_families

    j.expect(200, "getHealth")
    j.expect(200, "getReadiness")
    j.expect(200, "getOpenAPIDocument")
    metrics = j.call("GET /metrics", token=server.secrets["metrics-token"])
    assert metrics.status_code == 200, metrics.text[:300]
    assert any(f.name == "trifactor_http_requests_in_flight" for f in text_string_to_metric_families(metrics.text))
    j.problem(401, "unauthenticated", "GET /metrics", token="not-the-metrics-token")
    # The deployment doctor's check: a 404 without the key file's proof, what the server saw with it.
    j.problem(404, "not_found", "getDoctorEcho", headers={"Trifactor-Doctor": "at=1;nonce=00000000000000000000000000000000;proof=" + "0" * 64})
    ring_key = base64.b64decode(server.key_file.read_text().split()[-1])
    key = hmac.new(ring_key, b"trifactor doctor v1", hashlib.sha256).digest()
    at, nonce = int(time.time()), secrets.token_hex(16)
    proof = hmac.new(key, f"request\n{at}\n{nonce}".encode(), hashlib.sha256).hexdigest()
    r = j.call("getDoctorEcho", headers={"Trifactor-Doctor": f"at={at};nonce={nonce};proof={proof}"})
    assert r.status_code == 200, r.text
    assert r.headers["Trifactor-Doctor-Proof"] == hmac.new(key, f"answer\n{nonce}\n".encode() + r.content, hashlib.sha256).hexdigest()
    assert r.json()["client"] == "127.0.0.1" and r.json()["peer_trusted"] is False


def _account(server, j, user):
    """Sign-up, the email's code (a wrong one first), sign-in, the language, a new password. Returns an AAL1 token."""
    email = user["email"]
    j.expect(202, "signUp", json_body={"email": email, "password": user["password"], "display_name": "Journey", "locale": "en-gb"})
    code, first = _code_in(server, email, "email")
    j.problem(400, "invalid_code", "verifyEmail", json_body={"email": email, "code": "%06d" % ((int(code) + 1) % 1000000)})
    j.expect(202, "resendVerification", json_body={"email": email})
    code, _ = _code_in(server, email, "email", after=(first,))
    j.expect(200, "verifyEmail", json_body={"email": email, "code": code})
    token = j.expect(201, "createSession", json_body={"email": email, "password": user["password"]})["token"]
    j.expect(200, "getSession", token=token)
    j.expect(200, "listSessions", token=token)
    j.problem(404, "not_found", "getSitekey", token=token)
    j.problem(422, "invalid_fields", "setSitekey", json_body={"picture": "dragon", "phrase": "night watch"}, token=token)
    assert j.expect(200, "setSitekey", json_body={"picture": "owl", "phrase": " night watch "}, token=token)["phrase"] == "night watch"
    assert j.expect(200, "getSitekey", token=token)["picture"] == "owl"
    assert j.expect(200, "updateAccount", json_body={"locale": "de-de"}, token=token)["locale"] == "de-de"
    assert "locale" not in j.expect(200, "updateAccount", json_body={"locale": None}, token=token)
    j.problem(422, "invalid_fields", "changePassword", json_body={"current_password": "not it at all", "new_password": "x" * 12}, token=token)
    new_password = user["password"] + " 2"
    j.expect(204, "changePassword", json_body={"current_password": user["password"], "new_password": new_password}, token=token)
    user["password"] = new_password
    return token


def _enroll_every_factor(server, j, user, token):
    """An authenticator app (a wrong code first), a step-up, recovery codes, a phone, a device key and a passkey."""
    from test_passkeys_soft_webauthn import UVDevice, creation_options, credential_json

    f = {"phone_number": "447400123461"}
    started = j.expect(202, "startEnrollment", json_body={"kind": "totp"}, token=token)
    f["app"] = Authenticator(started["secret"])
    j.problem(400, "invalid_code", "finishEnrollment", {"id": started["enrollment_session"]}, json_body={"code": "12345"}, token=token)
    f["totp"] = j.expect(201, "finishEnrollment", {"id": started["enrollment_session"]}, json_body={"code": f["app"].code()},
                         token=token)["enrollment_id"]
    j.problem(401, "second_factor_required", "createRecoveryCodes", token=token)
    j.expect(202, "stepUp", json_body={"enrollment_id": f["totp"]}, token=token)
    raised = j.expect(200, "stepUp", json_body={"enrollment_id": f["totp"], "code": f["app"].code()}, token=token)
    assert raised["session"]["aal"] == 2, raised
    f["recovery_codes"] = j.expect(201, "createRecoveryCodes", token=token)["codes"]
    j.expect(200, "renameFactor", {"id": f["totp"]}, json_body={"display_name": "Journey app"}, token=token)

    # A second phone enrollment replaces the first one's running code.
    j.expect(202, "startEnrollment", json_body={"kind": "phone", "phone": "+" + f["phone_number"]}, token=token)
    session = j.expect(202, "startEnrollment", json_body={"kind": "phone", "phone": "+" + f["phone_number"]}, token=token)["enrollment_session"]
    code, f["last_sms"] = _code_in(server, f["phone_number"], "sms")
    f["phone"] = j.expect(201, "finishEnrollment", {"id": session}, json_body={"code": code}, token=token)["enrollment_id"]

    f["device"] = device = DeviceKey()
    body = {"kind": "device", "public_key": device.public_key, "device_name": "Journey phone"}
    started = j.expect(202, "startEnrollment", json_body=body, token=token)
    device.id = j.expect(201, "finishEnrollment", {"id": started["enrollment_session"]},
                         json_body={"signature": device.sign("enroll", started["challenge"])}, token=token)["enrollment_id"]
    j.problem(409, "second_factor_exists", "startEnrollment", json_body=body, token=token)

    f["passkey_device"] = UVDevice()
    started = j.expect(202, "startEnrollment", json_body={"kind": "passkey", "device_name": "Journey laptop"}, token=token)
    credential = credential_json(f["passkey_device"].create(creation_options(started["options"]), server.origin))
    f["passkey"] = j.expect(201, "finishEnrollment", {"id": started["enrollment_session"]}, json_body={"credential": credential},
                            token=token)["enrollment_id"]
    listed = j.expect(200, "listEnrollments", token=token)["enrollments"]
    assert {e["kind"] for e in listed} == {"totp", "recovery_code", "phone", "device", "passkey"}, listed
    f["recovery"] = next(e["enrollment_id"] for e in listed if e["kind"] == "recovery_code")
    return f


def _second_steps(server, j, user, f):
    """The sign-in's second step with every factor. Returns an AAL2 token (a device key's)."""
    from test_passkeys_soft_webauthn import credential_json, request_options

    def pending(enrollment_id):
        answer = j.expect(200, "createSession", json_body={"email": user["email"], "password": user["password"]})
        return {"pending_credential": answer["pending_credential"], "enrollment_id": enrollment_id}

    body = pending(f["totp"])
    j.expect(202, "sendSignInChallenge", json_body=body)
    j.problem(409, "second_factor_unusable", "callInstead", json_body=body)
    wrong = "000000" if f["app"].totp.now() != "000000" else "000001"
    assert j.problem(400, "invalid_code", "completeSecondStep", json_body={**body, "code": wrong})["remaining_attempts"] >= 0
    j.expect(201, "completeSecondStep", json_body={**body, "code": f["app"].code()})

    body = pending(f["phone"])
    j.expect(202, "sendSignInChallenge", json_body=body)
    code, f["last_sms"] = _code_in(server, f["phone_number"], "sms", after=(f["last_sms"],))
    j.expect(202, "callInstead", json_body=body)
    j.expect(201, "completeSecondStep", json_body={**body, "code": code})

    device = f["device"]
    body = pending(device.id)
    challenge = j.expect(202, "sendSignInChallenge", json_body=body)
    approval = {"approval": challenge["approval_id"]}
    state = {"pending_credential": body["pending_credential"], "wait": "0"}
    # The header the SDK sends; the deprecated query parameter below still works.
    assert j.expect(200, "getSignInApproval", approval, query={"wait": "0"},
                    headers={"X-Trifactor-Pending-Credential": body["pending_credential"]})["status"] == "pending"
    approvals = j.expect(200, "listDeviceApprovals", {"id": device.id}, headers=device.headers())["approvals"]
    assert [a["approval_id"] for a in approvals] == [challenge["approval_id"]], approvals
    j.expect(200, "decideApproval", {"id": device.id, **approval}, json_body=device.approve(challenge["approval_id"], challenge["number"]),
             headers=device.headers())
    assert j.expect(200, "getSignInApproval", approval, query=state)["status"] == "approved"
    j.expect(201, "completeSecondStep", json_body={**body, "approval_id": challenge["approval_id"]})
    body = pending(device.id)
    challenge = j.expect(202, "sendSignInChallenge", json_body=body)
    aal2 = j.expect(201, "completeSecondStep", json_body={**body, "code": device.sign("signin", challenge["challenge"])})["token"]

    j.expect(201, "completeSecondStep", json_body={**pending(f["recovery"]), "code": f["recovery_codes"][0]})
    body = pending(f["passkey"])
    options = j.expect(202, "sendSignInChallenge", json_body=body)["options"]
    assertion = credential_json(f["passkey_device"].get(request_options(options), server.origin))
    j.expect(201, "completeSecondStep", json_body={**body, "assertion": assertion})
    return aal2


def _passwordless(server, j, user, f):
    """A discoverable passkey (its assertion replayed), and a push approved on the device."""
    from test_passkeys_soft_webauthn import credential_json, request_options

    options = j.expect(200, "getPasskeyOptions")["options"]
    assertion = credential_json(f["passkey_device"].get(request_options(options), server.origin))
    assert j.expect(201, "signInWithPasskey", json_body={"assertion": assertion})["session"]["aal"] == 2
    j.problem(401, "passkey_refused", "signInWithPasskey", json_body={"assertion": assertion})

    device = f["device"]
    push = j.expect(202, "startPushSignIn", json_body={"email": user["email"]})
    complete = {"pending_credential": push["pending_credential"], "approval_id": push["approval_id"]}
    j.problem(400, "invalid_code", "completePushSignIn", json_body=complete)
    j.expect(200, "listDeviceApprovals", {"id": device.id}, headers=device.headers(), query={"wait": "1"})
    decision = device.approve(push["approval_id"], push["number"])
    j.expect(200, "decideApproval", {"id": device.id, "approval": push["approval_id"]}, json_body=decision, headers=device.headers())
    j.problem(404, "authorization_not_found", "decideApproval", {"id": device.id, "approval": push["approval_id"]}, json_body=decision,
              headers=device.headers())
    j.expect(201, "completePushSignIn", json_body=complete)


def _bound_actions(j, f, aal2):
    """An action confirmed with the device key: a changed action voids it, the same one spends it once; a wrong app code."""
    device = f["device"]
    action = {"type": "transfer", "amount": "250.00", "currency": "EUR", "payee": "Alice Example", "source": "DE89370400440532013000"}
    for consumed, status, code in ((dict(action, amount="2500.00"), 403, "authorization_mismatch"), (action, 200, None)):
        created = j.expect(202, "createAuthorization", json_body={"action": action, "enrollment_id": device.id}, token=aal2)
        signature = device.sign("authz", created["challenge"], created["action_hash"])
        j.expect(200, "approveAuthorization", {"id": created["authorization_id"]}, json_body={"code": signature}, token=aal2)
        answer = j.expect(status, "consumeAuthorization", {"id": created["authorization_id"]}, json_body={"action": consumed}, token=aal2)
        assert code is None or answer["code"] == code, answer
    j.problem(404, "authorization_not_found", "consumeAuthorization", {"id": created["authorization_id"]}, json_body={"action": action},
              token=aal2)
    created = j.expect(202, "createAuthorization", json_body={"action": action, "enrollment_id": f["totp"]}, token=aal2)
    # Asked again, the same authorization answers (an app has nothing to send; a phone gets a new text).
    again = j.expect(202, "resendAuthorization", {"id": created["authorization_id"]}, json_body={"action": action}, token=aal2)
    assert again["authorization_id"] == created["authorization_id"], again
    # Seven digits cannot be the app's code: said so, at no cost; a wrong six-digit one is counted, and the fifth ends it.
    j.problem(422, "invalid_fields", "approveAuthorization", {"id": created["authorization_id"]}, json_body={"code": "1234567"}, token=aal2)
    wrong = "000000" if f["app"].totp.now() != "000000" else "000001"
    for _ in range(4):
        j.problem(400, "invalid_code", "approveAuthorization", {"id": created["authorization_id"]}, json_body={"code": wrong}, token=aal2)
    j.problem(403, "attempts_exhausted", "approveAuthorization", {"id": created["authorization_id"]}, json_body={"code": wrong}, token=aal2)
    j.problem(404, "authorization_not_found", "resendAuthorization", {"id": created["authorization_id"]}, json_body={"action": action}, token=aal2)
    # Another action for a pending authorization voids it.
    created = j.expect(202, "createAuthorization", json_body={"action": action, "enrollment_id": f["totp"]}, token=aal2)
    j.problem(403, "authorization_mismatch", "resendAuthorization", {"id": created["authorization_id"]},
              json_body={"action": dict(action, payee="Mallory")}, token=aal2)


def _ending_sessions(j, f, token, aal2):
    """Removing a factor needs a fresh second factor; sessions end one by one."""
    j.expect(204, "removeFactor", {"id": f["passkey"]}, token=aal2)
    j.problem(404, "factor_not_found", "removeFactor", {"id": f["passkey"]}, token=aal2)
    j.expect(204, "revokeSession", {"id": j.expect(200, "getSession", token=token)["session"]["id"]}, token=aal2)
    j.problem(401, "unauthenticated", "getSession", token=token)
    j.expect(204, "signOut", token=aal2)
    j.problem(401, "unauthenticated", "listSessions", token=aal2)


def _password_reset(server, j, user, f):
    """A forgotten password: the emailed code (a wrong one and a malformed one first), the app's code, the new password."""
    email = user["email"]
    earlier = {m["id"] for m in server.outbox(email)}
    j.expect(202, "requestPasswordReset", json_body={"email": email})
    j.expect(202, "requestPasswordReset", json_body={"email": "nobody-" + email})
    message = server.wait_message(email, "email", timeout=5, exclude_ids=earlier)  # the code goes out a moment after the answer
    code = re.search(r"(?<!\d)\d{8}(?!\d)", message["text"]).group(0)
    j.problem(422, "invalid_fields", "verifyPasswordReset", json_body={"email": email, "code": "12ab"})
    j.problem(400, "invalid_code", "verifyPasswordReset", json_body={"email": email, "code": "%08d" % ((int(code) + 1) % 100000000)})
    verified = j.expect(200, "verifyPasswordReset", json_body={"email": email, "code": code[:4] + " " + code[4:]})
    assert verified["second_factor_required"] and any(h["enrollment_id"] == f["totp"] for h in verified["hints"]), verified
    body = {"reset_credential": verified["reset_credential"], "enrollment_id": f["totp"]}
    j.problem(409, "second_factor_unusable", "callInsteadForPasswordReset", json_body=body)
    j.expect(202, "sendPasswordResetChallenge", json_body=body)
    # The phone's code can be spoken instead; the app's code below is the one that finishes.
    by_phone = {"reset_credential": verified["reset_credential"], "enrollment_id": f["phone"]}
    j.expect(202, "sendPasswordResetChallenge", json_body=by_phone)
    j.expect(202, "callInsteadForPasswordReset", json_body=by_phone)
    new_password = user["password"] + " reset"
    j.problem(401, "second_factor_required", "completePasswordReset", json_body={"reset_credential": verified["reset_credential"],
                                                                                  "new_password": new_password})
    j.expect(204, "completePasswordReset", json_body={**body, "new_password": new_password, "code": f["app"].code()})
    j.problem(401, "invalid_reset_credential", "completePasswordReset", json_body={**body, "new_password": new_password + "!",
                                                                                    "code": f["app"].code()})
    user["password"] = new_password


def _phone_verification(server, j):
    """A conflict, a wrong code, the next step (twice), the right code; three wrong codes; cancelling early, in time, late."""
    key = (server.api_key, server.api_secret)
    number = "447400123462"
    start = {"brand": "Acme", "workflow": [{"channel": "sms", "to": number}, {"channel": "voice", "to": number}], "code": "4921",
             "channel_timeout": 60}
    verification = {"id": j.expect(202, "startVerification", json_body=start, auth=key)["request_id"]}
    assert j.problem(409, "concurrent_verification", "startVerification", json_body=start, auth=key)["request_id"] == verification["id"]
    assert j.problem(400, "invalid_code", "checkCode", verification, json_body={"code": "1111"}, auth=key)["remaining_attempts"] == 2
    j.problem(409, "cancel_too_early", "cancelVerification", verification, auth=key)
    j.expect(200, "nextWorkflow", verification, auth=key)
    j.problem(409, "no_more_events", "nextWorkflowHyphen", verification, auth=key)
    j.expect(200, "checkCode", verification, json_body={"code": "4921"}, auth=key)
    j.problem(404, "verification_not_found", "checkCode", verification, json_body={"code": "4921"}, auth=key)

    verification = {"id": j.expect(202, "startVerification", json_body={**start, "workflow": start["workflow"][:1]}, auth=key)["request_id"]}
    for code, status in (("1111", 400), ("2222", 400), ("3333", 410)):
        j.problem(status, "invalid_code" if status == 400 else "too_many_attempts", "checkCode", verification, json_body={"code": code},
                  auth=key)
    other = {"brand": "Acme", "workflow": [{"channel": "sms", "to": "447400123463"}, {"channel": "voice", "to": "447400123463"}]}
    j.expect(200, "nextWorkflowHyphen", {"id": j.expect(202, "startVerification", json_body=other, auth=key)["request_id"]}, auth=key)
    j.problem(401, "unauthorized", "startVerification", json_body=start, auth=(server.api_key, "not the secret"))
    j.problem(422, "invalid_parameters", "startVerification", json_body={"brand": "Acme", "workflow": [{"channel": "fax", "to": "1"}]},
              auth=key)

    time.sleep(max(0.0, 31 - (time.monotonic() - server.verifications_started)))
    cancellable, fired = ({"id": i} for i in server.verifications)
    j.expect(204, "cancelVerification", cancellable, auth=key)
    j.problem(404, "verification_not_found", "cancelVerification", cancellable, auth=key)
    j.expect(200, "nextWorkflow", fired, auth=key)
    j.problem(409, "cancel_too_late", "cancelVerification", fired, auth=key)


def _delivery_callbacks(server, j):
    """Receipts and events signed as the providers sign them; unsigned, mis-signed or incomplete ones refused."""
    import jwt

    def vonage_sig(params):
        text = "".join(f"&{k}=" + v.replace("&", "_").replace("=", "_") for k, v in sorted(params.items()) if k != "sig")
        return hmac.new(server.secrets["vonage-signature"].encode(), text.encode(), hashlib.sha256).hexdigest()

    receipt = {"api-key": "vkey", "messageId": "0A00000012345678", "status": "delivered", "err-code": "0", "msisdn": "447400123461",
               "to": "Trifactor", "timestamp": str(int(time.time())), "nonce": secrets.token_hex(8)}
    signed = {**receipt, "sig": vonage_sig(receipt)}
    j.expect(204, "receiveVonageSMSReceiptByGET", query=signed)
    j.expect(204, "receiveVonageSMSReceipt", data=signed)
    j.expect(204, "receiveVonageSMSReceipt", json_body=signed)
    incomplete = {k: v for k, v in receipt.items() if k != "messageId"}
    j.problem(400, "malformed_request", "receiveVonageSMSReceipt", data={**incomplete, "sig": vonage_sig(incomplete)})
    j.problem(403, "forbidden", "receiveVonageSMSReceipt", data={**receipt, "sig": "0" * 64})

    event = json.dumps({"uuid": "aaaaaaaa-bbbb-cccc-dddd-0123456789ab", "status": "completed", "direction": "outbound"}).encode()
    claims = {"iat": int(time.time()), "jti": secrets.token_hex(8), "payload_hash": hashlib.sha256(event).hexdigest()}
    bearer = jwt.encode(claims, server.secrets["vonage-signature"], algorithm="HS256")
    j.expect(204, "receiveVonageVoiceEvent", data=event, headers={"Content-Type": "application/json", "Authorization": f"Bearer {bearer}"})
    j.problem(403, "forbidden", "receiveVonageVoiceEvent", data=event, headers={"Content-Type": "application/json"})

    fields = {"AccountSid": TWILIO_SID, "MessageSid": "SM" + "ab" * 16, "MessageStatus": "undelivered", "ErrorCode": "30003"}
    signed_text = server.public_url + "/v1/delivery/twilio" + "".join(k + v for k, v in sorted(fields.items()))
    signature = base64.b64encode(hmac.new(server.secrets["twilio-token"].encode(), signed_text.encode(), hashlib.sha1).digest()).decode()
    j.expect(204, "receiveTwilioCallback", data=fields, headers={"X-Twilio-Signature": signature})
    j.problem(403, "forbidden", "receiveTwilioCallback", data=fields, headers={"X-Twilio-Signature": "bm90IGl0"})


def _admin(server, j, user):
    """The admin API on the journey's user: find, show, every action, the audit trail, and deletion."""
    write, read = server.admin["write"], server.admin["journey-read"]
    found = j.expect(200, "GET /admin/v1/users", query={"email": user["email"]}, token=read)["users"]
    who = {"id": found[0]["id"]}
    j.expect(200, "GET /admin/v1/users/{id}", who, token=read)
    j.problem(403, "admin_read_only", "POST /admin/v1/users/{id}/disable", who, token=read)
    for action in ("verify-email", "revoke-sessions", "reset-mfa", "disable", "enable"):
        j.expect(200, f"POST /admin/v1/users/{{id}}/{action}", who, token=write)
    j.expect(200, "GET /admin/v1/audit", query={"user": who["id"], "limit": "5"}, token=read)
    j.expect(200, "DELETE /admin/v1/users/{id}", who, token=write)
    j.problem(404, "user_not_found", "GET /admin/v1/users/{id}", who, token=read)
    j.problem(401, "admin_key_required", "GET /admin/v1/users", query={"email": user["email"]}, token=server.secrets["metrics-token"])
    j.problem(404, "not_found", "GET /admin/v1/users/{id}", raw_path="/admin/v1/users/a%2Fb", token=read)
    # Test numbers: an administrator's can be set and removed; the configuration's cannot.
    number = {"number": "447400555123"}
    j.expect(200, "PUT /admin/v1/test-numbers/{number}", number, json_body={"code": "8642"}, token=write)
    listed = j.expect(200, "GET /admin/v1/test-numbers", token=read)["test_numbers"]
    assert {"447400555123", "447400123460"} <= {t["number"] for t in listed}, listed
    assert j.expect(409, "PUT /admin/v1/test-numbers/{number}", {"number": "447400123460"}, json_body={"code": "8642"}, token=write)
    j.expect(204, "DELETE /admin/v1/test-numbers/{number}", number, token=write)
    assert j.expect(404, "DELETE /admin/v1/test-numbers/{number}", number, token=write)
    j.problem(405, "method_not_allowed", "DELETE /admin/v1/users/{id}", raw_path="/admin/v1/users/", token=write)


def _admin_clients(j):
    """OpenID Provider clients: made (the secret shown only then), listed, shown, replaced, given a new secret, deleted."""
    write, read = j.server.admin["write"], j.server.admin["journey-read"]
    body = {"client_name": "Journey", "redirect_uris": ["https://journey.example/cb"], "scope": "openid email"}
    created = j.expect(201, "adminCreateClient", json_body=body, token=write)
    client = {"id": created["client_id"]}
    assert len(created["client_secret"]) == 43, created
    j.problem(409, "client_exists", "adminCreateClient", json_body={**body, "client_id": created["client_id"]}, token=write)
    j.problem(422, "invalid_fields", "adminCreateClient", json_body={**body, "redirect_uris": ["http://journey.example/cb"]},
              token=write)
    j.problem(403, "admin_read_only", "adminCreateClient", json_body=body, token=read)
    listed = j.expect(200, "adminListClients", token=read)["clients"]
    assert created["client_id"] in {c["client_id"] for c in listed} and not [c for c in listed if "client_secret" in c], listed
    shown = j.expect(200, "adminGetClient", client, token=read)
    assert "client_secret" not in shown, shown
    # A client's JSON goes back as it came, changed where it should be; the id and the secret stay.
    assert j.expect(200, "adminUpdateClient", client, json_body={**shown, "client_name": "Journey 2"}, token=write)["client_name"] == "Journey 2"
    assert j.expect(200, "adminRotateClientSecret", client, token=write)["client_secret"] != created["client_secret"]
    public = {"id": j.expect(201, "adminCreateClient", json_body={**body, "token_endpoint_auth_method": "none"}, token=write)["client_id"]}
    j.problem(409, "client_has_no_secret", "adminRotateClientSecret", public, token=write)
    for c in (client, public):
        j.expect(204, "adminDeleteClient", c, token=write)
    j.problem(404, "client_not_found", "adminGetClient", client, token=read)
    j.problem(404, "client_not_found", "adminUpdateClient", client, json_body=body, token=write)


def _admin_webhooks(j):
    """Webhook endpoints: made (the secret shown only then), listed, shown, changed, given a new secret, deleted.
    The URL is a public address, so that nothing is resolved and the contract server needs no private ones."""
    write, read = j.server.admin["write"], j.server.admin["journey-read"]
    body = {"url": "https://93.184.216.34/journey", "event_types": ["user.signed_in", "user.locked_out"],
            "description": "journey"}
    created = j.expect(201, "adminCreateWebhook", json_body=body, token=write)
    endpoint = {"id": created["id"]}
    assert created["secret"].startswith("whsec_"), created
    j.problem(422, "invalid_fields", "adminCreateWebhook", json_body={**body, "url": "https://169.254.169.254/"}, token=write)
    j.problem(422, "invalid_fields", "adminCreateWebhook", json_body={**body, "event_types": ["user.hacked"]}, token=write)
    j.problem(403, "admin_read_only", "adminCreateWebhook", json_body=body, token=read)
    listed = j.expect(200, "adminListWebhooks", token=read)["webhooks"]
    assert created["id"] in {w["id"] for w in listed} and not [w for w in listed if "secret" in w], listed
    shown = j.expect(200, "adminGetWebhook", endpoint, token=read)
    assert "secret" not in shown and shown["undelivered"] == 0, shown
    assert j.expect(200, "adminUpdateWebhook", endpoint, json_body={"enabled": False}, token=write)["status"] == "disabled"
    assert j.expect(200, "adminRotateWebhookSecret", endpoint, token=write)["secret"] != created["secret"]
    j.expect(204, "adminDeleteWebhook", endpoint, token=write)
    j.problem(404, "not_found", "adminGetWebhook", endpoint, token=read)
    j.problem(404, "not_found", "adminUpdateWebhook", endpoint, json_body={"enabled": True}, token=write)


def _http_layer(j):
    """Too large, too long (by its arguments and by its length), not JSON, malformed JSON, an encoded slash, no route."""
    j.problem(413, "payload_too_large", "signUp", data=b"{" + b" " * 70000 + b"}", headers={"Content-Type": "application/json"})
    j.problem(414, "uri_too_long", "getHealth", raw_path="/health?" + "&".join(f"a{i}=1" for i in range(65)))
    j.problem(414, "uri_too_long", "getHealth", raw_path="/health?" + "a" * 5000)
    # A head past what a connection's memory holds is refused by the HTTP library itself, before any route.
    # (Outside the contract: not checked against the document.)
    assert requests.get(j.server.base_url + "/health?" + "a" * 9000, timeout=10).status_code in (414, 431)
    j.problem(415, "unsupported_media_type", "signUp", data=b"email=a", headers={"Content-Type": "application/x-www-form-urlencoded"})
    j.problem(400, "malformed_json", "signUp", data=b"{", headers={"Content-Type": "application/json"})
    j.problem(404, "not_found", "revokeSession", raw_path="/v1/sessions/a%2Fb")
    j.problem(405, "method_not_allowed", "revokeSession", raw_path="/v1/sessions/")


def _database_outage(server, j):
    """With SQLite's write lock held elsewhere, writes wait out the busy timeout (5 s) and answer 503 with Retry-After."""
    import sqlite3
    from concurrent.futures import ThreadPoolExecutor

    key = (server.api_key, server.api_secret)
    fields = {"AccountSid": TWILIO_SID, "MessageSid": "SM" + "cd" * 16, "MessageStatus": "delivered"}
    writes = [
        ("signUp", {"json_body": {"email": f"outage-{secrets.token_hex(4)}@example.org", "password": "outage " + secrets.token_hex(8)}}),
        ("getPasskeyOptions", {}),
        ("startVerification", {"json_body": {"brand": "Acme", "workflow": [{"channel": "sms", "to": "447400123465"}]}, "auth": key}),
        ("receiveTwilioCallback", {"data": fields, "headers": {"X-Twilio-Signature": "bm90IGl0"}}),
        ("receiveVonageSMSReceiptByGET", {"query": {"api-key": "vkey", "messageId": "0A00000012345679", "status": "delivered"}}),
    ]
    lock = sqlite3.connect(server.database_path, isolation_level=None, timeout=10)
    try:
        lock.execute("BEGIN EXCLUSIVE")
        with ThreadPoolExecutor(len(writes)) as pool:
            answers = list(pool.map(lambda w: (w[0], j.call(w[0], **w[1])), writes))
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    for opid, r in answers:
        if r.status_code != 503 and (opid, r.status_code) in j.seen:  # an undocumented status is noted already
            j.disagreements.append(f"{opid} with the database locked -> {r.status_code} {r.text[:200]!r}\n      expected 503 with Retry-After")
