"""The official `vonage` Python SDK (v4) drives trifactord's Verify v2 API unchanged.

Each test uses its own GB mobile number: only one verification per number may
run at a time.
"""

import time
import uuid

import pytest
from vonage_http_client import AuthenticationError, HttpRequestError, NotFoundError
from vonage_verify import SmsChannel, VerifyRequest, VoiceChannel

from conftest import sms_code, voice_code

N_CHECK = "447400123456"
N_ATTEMPTS = "447400123457"
N_CONCURRENT = "447400123458"
N_CANCEL = "447400123459"
N_NEXT = "447400123460"
N_AUTH = "447400123461"
N_INVALID = "447400123462"

TOO_MANY = "An incorrect code has been provided too many times. Workflow terminated."
CONCURRENT = "Concurrent verifications to the same number are not allowed."


def wrong(code: str) -> str:
    """A code of the same length that is not `code`."""
    return str((int(code[0]) + 1) % 10) + code[1:]


def body(e: HttpRequestError) -> dict:
    try:
        return e.response.json()
    except ValueError:
        pytest.fail(f"error body is not JSON: {e.response.status_code} {e.response.text!r}")


def describe(e: HttpRequestError) -> str:
    r = e.response
    return f"{r.request.method} {r.url} -> {r.status_code} {r.text}"


def start_sms(client, number, **kw):
    return client.verify.start_verification(
        VerifyRequest(brand="Acme", workflow=[SmsChannel(to=number)], **kw)
    )


def test_start_wrong_code_right_code_then_gone(server, client):
    started = start_sms(client, N_CHECK, code_length=6)
    request_id = started.request_id
    uuid.UUID(request_id)  # a UUID, as Vonage gives

    sms = server.wait_message(N_CHECK, "sms")
    assert "Acme" in sms["text"], sms
    code = sms_code(sms["text"])
    assert len(code) == 6, f"code_length=6 but the SMS says {sms['text']!r}"

    with pytest.raises(HttpRequestError) as wrong_try:
        client.verify.check_code(request_id, wrong(code))
    assert wrong_try.value.response.status_code == 400, describe(wrong_try.value)
    assert body(wrong_try.value).get("title") == "Invalid Code", describe(wrong_try.value)

    checked = client.verify.check_code(request_id, code)
    assert checked.request_id == request_id
    assert checked.status == "completed"

    with pytest.raises(NotFoundError) as again:
        client.verify.check_code(request_id, code)
    assert again.value.response.status_code == 404


def test_three_wrong_codes_end_the_workflow(server, client):
    request_id = start_sms(client, N_ATTEMPTS).request_id
    code = server.code_for(N_ATTEMPTS)

    for attempt in (1, 2):
        with pytest.raises(HttpRequestError) as e:
            client.verify.check_code(request_id, wrong(code))
        assert e.value.response.status_code == 400, f"attempt {attempt}: {describe(e.value)}"

    with pytest.raises(HttpRequestError) as third:
        client.verify.check_code(request_id, wrong(code))
    assert third.value.response.status_code == 410, describe(third.value)
    assert body(third.value).get("detail") == TOO_MANY, describe(third.value)

    with pytest.raises(NotFoundError) as after:
        client.verify.check_code(request_id, code)
    assert after.value.response.status_code == 404


def test_one_verification_per_number_at_a_time(server, client):
    start_sms(client, N_CONCURRENT)
    server.code_for(N_CONCURRENT)

    with pytest.raises(HttpRequestError) as e:
        start_sms(client, N_CONCURRENT)
    assert e.value.response.status_code == 409, describe(e.value)
    assert body(e.value).get("detail") == CONCURRENT, describe(e.value)


def test_cancel_refused_for_30s_then_allowed(server, client):
    request_id = start_sms(client, N_CANCEL).request_id
    code = server.code_for(N_CANCEL)

    with pytest.raises(HttpRequestError) as early:
        client.verify.cancel_verification(request_id)
    assert early.value.response.status_code == 409, describe(early.value)

    time.sleep(31)
    assert client.verify.cancel_verification(request_id) is None
    assert client.http_client.last_response.status_code == 204

    with pytest.raises(NotFoundError) as after:
        client.verify.check_code(request_id, code)
    assert after.value.response.status_code == 404


def test_next_workflow_calls_with_the_same_code(server, client):
    request_id = client.verify.start_verification(
        VerifyRequest(brand="Acme", workflow=[SmsChannel(to=N_NEXT), VoiceChannel(to=N_NEXT)])
    ).request_id
    sms = server.code_for(N_NEXT)

    assert client.verify.trigger_next_workflow(request_id) is None
    call = server.wait_message(N_NEXT, "voice")
    assert voice_code(call["text"]) == sms, f"SMS code {sms}, voice text {call['text']!r}"

    with pytest.raises(HttpRequestError) as e:
        client.verify.trigger_next_workflow(request_id)
    assert e.value.response.status_code == 409, describe(e.value)


def test_wrong_secret_is_refused(server):
    bad = server.client(api_secret="x" * len(server.api_secret))
    with pytest.raises(AuthenticationError) as e:
        start_sms(bad, N_AUTH)
    assert e.value.response.status_code == 401
    assert server.outbox(N_AUTH) == [], "a refused request must send nothing"


def test_invalid_brand_names_the_parameter(server, client):
    with pytest.raises(HttpRequestError) as e:
        client.verify.start_verification(
            VerifyRequest(brand="Ac/me", workflow=[SmsChannel(to=N_INVALID)])
        )
    assert e.value.response.status_code == 422, describe(e.value)
    names = [p.get("name") for p in body(e.value).get("invalid_parameters", [])]
    assert "brand" in names, describe(e.value)
