"""The hosted sign-in pages as a user and an attacker meet them: wrong and replayed second-factor codes,
a wrong password, the assurance levels asked for with acr_values, consent per scope, replayed form posts,
escaping of reflected parameters, single use under concurrency, and the headers that keep tokens and pages
out of caches and frames.
"""

import threading

from oidc_support import (ACR_MFA, Browser, User, forms_of, oauth_error, op, redeem, refresh,  # noqa: F401
                          sign_in_for_code, verify_id_token)

ACR_HWK = "urn:trifactor:acr:hwk"


def _to_second_factor(op, browser, client, user):
    """Email and password of an MFA user: the second-factor form's fields."""
    r = browser.http.get(op.authorize_url(client, state="mfa"), allow_redirects=True, timeout=10)
    form = forms_of(r.text).forms[0]
    r = browser.http.post(op.issuer + "/authorize/sign-in", data={**form["inputs"], "email": user.email},
                          allow_redirects=True, timeout=10)
    form = [f for f in forms_of(r.text).forms if f["action"].endswith("/authorize/password")][0]
    r = browser.http.post(op.issuer + "/authorize/password", data={**form["inputs"], "password": user.password},
                          allow_redirects=True, timeout=10)
    assert r.url.startswith(op.issuer + "/authorize/second-factor"), r.url
    assert browser.cookie("tf_session") is None, "a session before the second factor"
    return [f for f in forms_of(r.text).forms if f["action"].endswith("/authorize/second-factor")][0]["inputs"]


def test_a_wrong_or_replayed_authenticator_code_is_refused_and_no_session_is_made(op):
    client = op.register(first_party=True)
    user = op.user()
    browser = Browser(op)
    fields = _to_second_factor(op, browser, client, user)
    wrong = "000000" if user.totp.now() != "000000" else "111111"
    r = browser.http.post(op.issuer + "/authorize/second-factor", data={**fields, "code": wrong},
                          allow_redirects=False, timeout=10)
    # Post/Redirect/Get: the error comes back through a GET, so a reload never posts the wrong code again.
    assert r.status_code == 303 and "error=wrong" in r.headers["Location"], (r.status_code, r.headers)
    r = browser.http.get(op.issuer + r.headers["Location"], timeout=10)
    assert r.status_code == 422 and "That code did not work" in r.text, (r.status_code, r.text[:300])
    # The count of tries left is shown from the first wrong code on, not only once few are left.
    assert "Tries left before this sign-in stops: 4." in r.text, r.text[:600]
    assert browser.cookie("tf_session") is None

    code = user.next_code()
    r = browser.http.post(op.issuer + "/authorize/second-factor", data={**fields, "code": code},
                          allow_redirects=False, timeout=10)
    assert r.status_code == 303 and browser.cookie("tf_session"), (r.status_code, r.headers)
    assert r.headers["Location"].startswith(client.redirect_uri + "?code="), r.headers  # first party: no consent

    # The same code, seen by someone looking over the user's shoulder, does not work in another browser.
    other = Browser(op)
    fields = _to_second_factor(op, other, client, user)
    r = other.http.post(op.issuer + "/authorize/second-factor", data={**fields, "code": code}, timeout=10)
    assert r.status_code == 422 and other.cookie("tf_session") is None, (r.status_code, r.headers)
    # A code of the wrong shape is said so on the page, never a server error.
    r = other.http.post(op.issuer + "/authorize/second-factor", data={**fields, "code": "12345"}, timeout=10)
    assert r.status_code == 422 and "not a code" in r.text, (r.status_code, r.text[:300])


def test_a_wrong_password_shows_the_form_again_with_401_and_no_session(op):
    client = op.register()
    user = op.user(totp=False)
    browser = Browser(op)
    outcome = browser.authorize(op.authorize_url(client, state="w"), User(email=user.email, password="not it at all"))
    assert outcome.kind == "page" and outcome.response.status_code == 401, outcome.describe()
    assert outcome.steps == ["sign-in", "password"], outcome.describe()
    assert browser.cookie("tf_session") is None and browser.cookie("tf_pending") is None


def test_acr_values_asks_for_more_than_the_user_has_proved_or_owns(op):
    # OIDC Core §3.1.2.1 acr_values, §3.1.2.6 interaction_required; OpenID Connect EAP ACR unmet requirements
    client = op.register()
    password_only = op.user(totp=False)
    browser = Browser(op)
    sign_in_for_code(op, browser, client, password_only)
    outcome = browser.authorize(op.authorize_url(client, acr_values=ACR_MFA, prompt="none", state="i"))
    assert outcome.kind == "redirect" and outcome.params.get("error") == "interaction_required", outcome.describe()
    outcome = browser.authorize(op.authorize_url(client, acr_values=ACR_MFA, state="i"), password_only)
    assert outcome.kind == "page" and "/authorize/add-factor" in outcome.location, outcome.describe()

    mfa_user = op.user()
    mfa_browser = Browser(op)
    sign_in_for_code(op, mfa_browser, client, mfa_user, acr_values=ACR_MFA)
    outcome = mfa_browser.authorize(op.authorize_url(client, acr_values=ACR_HWK, state="h"), mfa_user)
    assert outcome.kind == "redirect", outcome.describe()
    assert outcome.params.get("error") == "unmet_authentication_requirements", outcome.describe()
    assert "code" not in outcome.params


def test_consent_covers_only_the_scopes_the_user_agreed_to(op):
    client = op.register()
    user = op.user(totp=False)
    browser = Browser(op)
    sign_in_for_code(op, browser, client, user, scope="openid")
    outcome = browser.authorize(op.authorize_url(client, scope="openid email", prompt="none", state="c"))
    assert outcome.params.get("error") == "consent_required", outcome.describe()
    outcome = browser.authorize(op.authorize_url(client, scope="openid email", state="c"), user)
    assert outcome.steps == ["consent"] and outcome.code, outcome.describe()
    outcome = browser.authorize(op.authorize_url(client, scope="openid email", prompt="consent", state="c"), user)
    assert outcome.steps == ["consent"] and outcome.code, outcome.describe()


def test_prompt_none_combined_with_another_value_is_invalid_request(op):
    client = op.register()
    outcome = Browser(op).authorize(op.authorize_url(client, prompt="none login", state="p"))
    assert outcome.kind == "redirect" and outcome.params.get("error") == "invalid_request", outcome.describe()


def test_signing_out_ends_a_grant_without_offline_access_but_not_one_with_it(op):
    client = op.register()
    user = op.user(totp=False)
    browser = Browser(op)
    online = redeem(op, client, sign_in_for_code(op, browser, client, user).code).json()
    offline = redeem(op, client, sign_in_for_code(op, browser, client, user,
                                                  scope="openid offline_access").code).json()
    assert op.srv.call("DELETE", "/v1/session", token=browser.cookie("tf_session")).status_code == 204
    oauth_error(refresh(op, client, online["refresh_token"]), 400, "invalid_grant")
    r = refresh(op, client, offline["refresh_token"])
    assert r.status_code == 200, r.text


def test_the_state_comes_back_byte_for_byte_and_reflected_parameters_are_escaped(op):
    client = op.register()
    user = op.user(totp=False)
    browser = Browser(op)
    state = "a b&c=d+e/é%20<>\"'#"
    outcome = browser.authorize(op.authorize_url(client, state=state), user)
    assert outcome.params.get("state") == state, outcome.describe()

    script = '"><script>alert(1)</script>'
    r = browser.http.get(op.authorize_url(client, state=script, response_mode="form_post"), timeout=10)
    assert r.status_code == 200 and "<script>alert" not in r.text, r.text
    r = Browser(op).http.get(op.authorize_url(client, login_hint=script), timeout=10)
    assert r.status_code == 200 and "<script>alert" not in r.text, r.text


def test_a_code_and_a_refresh_token_are_each_redeemed_once_even_concurrently(op):
    client = op.register()
    user = op.user(totp=False)
    browser = Browser(op)

    def race(call):
        results = []
        threads = [threading.Thread(target=lambda: results.append(call().status_code)) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return sorted(results)

    code = sign_in_for_code(op, browser, client, user).code
    assert race(lambda: redeem(op, client, code)) == [200, 400, 400, 400]
    tokens = redeem(op, client, sign_in_for_code(op, browser, client, user, scope="openid offline_access").code)
    token = tokens.json()["refresh_token"]
    assert race(lambda: refresh(op, client, token)) == [200, 400, 400, 400]


def test_a_finished_flow_cannot_be_replayed_for_a_second_code(op):
    client = op.register()
    user = op.user(totp=False)
    browser = Browser(op)
    r = browser.http.get(op.authorize_url(client, state="z"), allow_redirects=True, timeout=10)
    form = forms_of(r.text).forms[0]
    r = browser.http.post(op.issuer + "/authorize/sign-in", data={**form["inputs"], "email": user.email},
                          allow_redirects=True, timeout=10)
    form = [f for f in forms_of(r.text).forms if f["action"].endswith("/authorize/password")][0]
    r = browser.http.post(op.issuer + "/authorize/password", data={**form["inputs"], "password": user.password},
                          allow_redirects=True, timeout=10)
    consent = [f for f in forms_of(r.text).forms if f["action"].endswith("/authorize/consent")][0]["inputs"]
    first = browser.http.post(op.issuer + "/authorize/consent", data={**consent, "decision": "allow"},
                              allow_redirects=False, timeout=10)
    assert first.status_code == 303 and "code=" in first.headers["Location"], first.headers
    again = browser.http.post(op.issuer + "/authorize/consent", data={**consent, "decision": "allow"},
                              allow_redirects=False, timeout=10)
    assert again.status_code == 400 and "Location" not in again.headers, (again.status_code, again.headers)
    assert "This sign-in has ended" in again.text


def test_tokens_and_pages_are_kept_out_of_caches_and_frames(op):
    # RFC 6749 §5.1 (Cache-Control: no-store), §10.13 (clickjacking)
    client = op.register()
    user = op.user(totp=False)
    browser = Browser(op)
    r = redeem(op, client, sign_in_for_code(op, browser, client, user).code)
    assert r.headers.get("Cache-Control") == "no-store", r.headers
    r = redeem(op, client, "x" * 43)
    assert r.status_code == 400 and r.headers.get("Cache-Control") == "no-store", r.headers
    page = Browser(op).http.get(op.authorize_url(client), timeout=10)
    assert page.headers.get("Cache-Control") == "no-store", page.headers
    assert "frame-ancestors 'none'" in page.headers.get("Content-Security-Policy", "") \
        or page.headers.get("X-Frame-Options") == "DENY", page.headers


def test_a_user_without_a_second_factor_adds_an_authenticator_app_on_the_way_and_gets_the_level_asked_for(op):
    # A client that asks for a second factor never leaves a password-only user at a dead end: the hosted pages
    # enroll an authenticator app (the API's enrollment), then ask for its next code, then send the code back.
    import re

    import pyotp

    client = op.register()
    user = op.user(totp=False)
    browser = Browser(op)
    outcome = browser.authorize(op.authorize_url(client, acr_values=ACR_MFA, state="a"), user)
    assert outcome.kind == "page" and "/authorize/add-factor" in outcome.location, outcome.describe()
    start = [f for f in forms_of(outcome.response.text).forms if f["action"] == "/authorize/add-factor"]
    assert start, outcome.response.text
    r = browser.http.post(op.issuer + "/authorize/add-factor", data=dict(start[0]["inputs"]))
    assert r.status_code == 200 and "/authorize/add-factor/app" in r.url, (r.status_code, r.url)
    secret = re.search(r'data-secret="([A-Z2-7]+)"', r.text)
    assert secret and 'src="data:image/svg+xml;base64,' in r.text and 'href="otpauth://totp/' in r.text, r.text
    # A reload (Post/Redirect/Get) shows the same key: the one already scanned keeps working.
    again = browser.http.get(r.url)
    assert re.search(r'data-secret="([A-Z2-7]+)"', again.text).group(1) == secret.group(1)
    user.totp = pyotp.TOTP(secret.group(1))
    finish = [f for f in forms_of(r.text).forms if f["action"] == "/authorize/add-factor/app"][0]
    r = browser.http.post(op.issuer + "/authorize/add-factor/app", data=dict(finish["inputs"], code="000000"))
    assert r.status_code == 422 and "That code did not work" in r.text, r.text
    assert re.search(r'data-secret="([A-Z2-7]+)"', r.text).group(1) == secret.group(1), "the key stays on the page"
    r = browser.http.post(op.issuer + "/authorize/add-factor/app", data=dict(finish["inputs"], code="12"))
    assert r.status_code == 422 and "6 digits" in r.text, "a code of the wrong shape is said so, not a 5xx"
    fields = dict(finish["inputs"], code=user.next_code())
    r = browser.http.post(op.issuer + "/authorize/add-factor/app", data=fields, allow_redirects=False)
    assert r.status_code == 303 and "added=1" in r.headers["Location"], (r.status_code, r.text[:300])
    outcome = browser.follow(r, user)
    assert outcome.kind == "redirect" and outcome.code, outcome.describe()
    tokens = redeem(op, client, outcome.code).json()
    assert verify_id_token(op, tokens["id_token"], client.id)["acr"] == ACR_MFA


def test_forgot_password_on_the_hosted_pages_resets_it_with_the_emailed_code_and_the_second_factor(op):
    # The API's reset behind the password page's link: one code emailed, the account's factor before the new
    # password, every session ended, then the sign-in goes on with the new password.
    import re

    client = op.register()
    user = op.user()  # with an authenticator app
    browser = Browser(op)
    r = browser.http.get(op.authorize_url(client, state="r"), allow_redirects=True)
    flow = re.search(r"flow=([\w-]{43})", r.url).group(1)
    r = browser.http.get(f"{op.issuer}/authorize/reset?flow={flow}")
    assert r.status_code == 200 and "Email me a code" in r.text, r.text
    form = [f for f in forms_of(r.text).forms if f["action"] == "/authorize/reset"][0]
    r = browser.http.post(op.issuer + "/authorize/reset", data=dict(form["inputs"], email=user.email))
    assert r.status_code == 200 and "Code from the email" in r.text, r.text
    import time
    deadline, code = time.monotonic() + 15, None
    while code is None:  # the reset email is queued by the background pass, after the answer
        found = [re.search(r"\b(\d{8})\b", m["text"]) for m in op.srv.outbox(user.email) if m["channel"] == "email"]
        code = next((m.group(1) for m in found if m), None)
        assert code or time.monotonic() < deadline, f"no reset email: {op.srv.outbox(user.email)}"
        time.sleep(0.1)
    form = [f for f in forms_of(r.text).forms if f["action"] == "/authorize/reset/code"][0]
    r = browser.http.post(op.issuer + "/authorize/reset/code", data=dict(form["inputs"], code="0000 0000"))
    assert r.status_code == 422 and "That code did not work" in r.text
    r = browser.http.post(op.issuer + "/authorize/reset/code", data=dict(form["inputs"], code=code))
    assert r.status_code == 200 and "Choose a new password" in r.text, r.text
    form = [f for f in forms_of(r.text).forms if f["action"] == "/authorize/reset/password"][0]
    new_password = "a brand new horse battery"
    r = browser.http.post(op.issuer + "/authorize/reset/password", data=dict(form["inputs"], password=new_password))
    assert r.status_code == 422 and "prove" in r.text, "a new password without the factor's code is refused"
    form = [f for f in forms_of(r.text).forms if f["action"] == "/authorize/reset/password"][0]
    r = browser.http.post(op.issuer + "/authorize/reset/password",
                          data=dict(form["inputs"], password=new_password, code=user.next_code()),
                          allow_redirects=False)
    assert r.status_code == 303 and "reset=1" in r.headers["Location"], (r.status_code, r.text[:300])
    user.password = new_password
    outcome = browser.follow(browser.http.get(op.issuer + r.headers["Location"], allow_redirects=False), user)
    assert outcome.kind == "redirect" and outcome.code, outcome.describe()


def test_the_email_page_says_why_it_is_back_and_not_you_starts_from_an_empty_field(op):
    import re

    client = op.register()
    user = op.user(totp=False)
    browser = Browser(op)
    r = browser.http.get(op.authorize_url(client, state="n", login_hint=user.email), allow_redirects=True,
                         timeout=10)
    flow = re.search(r"flow=([\w-]{43})", r.url).group(1)
    assert f'value="{user.email}"' in r.text, "login_hint fills the email field"
    for query, sentence in (("stopped=1", "Too many wrong codes"), ("signedout=1", "You were signed out"),
                            ("reset=1", "Your password is changed"), ("expired=1", "took too long")):
        page = browser.http.get(f"{op.issuer}/authorize/sign-in?flow={flow}&{query}", timeout=10)
        assert page.status_code == 200 and sentence in page.text, (query, page.text[:400])
    other = browser.http.get(f"{op.issuer}/authorize/sign-in?flow={flow}&other=1", timeout=10)
    assert f'value="{user.email}"' not in other.text, "'Not you?' keeps the old address"


def test_a_reset_text_refused_by_a_limit_says_how_long_to_wait_not_a_server_error():
    """"Text me a code" in a reset, past the number's limit: the reset page says to wait (429), never a 503 dead
    end, and its form is still there."""
    import re
    import time

    from oidc_support import running_provider
    from test_oidc_payments import payer

    with running_provider("--verify-number-burst", "1", "--verify-number-rate", "0.01") as provider:
        client = provider.register()
        user = payer(provider)  # an authenticator app and a phone: the enrolment text took the number's one text
        browser = Browser(provider)
        r = browser.http.get(provider.authorize_url(client, state="r"), allow_redirects=True)
        flow = re.search(r"flow=([\w-]{43})", r.url).group(1)
        r = browser.http.get(f"{provider.issuer}/authorize/reset?flow={flow}")
        form = [f for f in forms_of(r.text).forms if f["action"] == "/authorize/reset"][0]
        r = browser.http.post(provider.issuer + "/authorize/reset", data=dict(form["inputs"], email=user.email))
        deadline, code = time.monotonic() + 15, None
        while code is None:
            found = [re.search(r"\b(\d{8})\b", m["text"]) for m in provider.srv.outbox(user.email)
                     if m["channel"] == "email"]
            code = next((m.group(1) for m in found if m), None)
            assert code or time.monotonic() < deadline, "no reset email"
            time.sleep(0.1)
        form = [f for f in forms_of(r.text).forms if f["action"] == "/authorize/reset/code"][0]
        r = browser.http.post(provider.issuer + "/authorize/reset/code", data=dict(form["inputs"], code=code))
        phone_link = re.search(r'href="(/authorize/reset/password\?[^"]*factor=[^"]+)"', r.text)
        page = browser.http.get(provider.issuer + phone_link.group(1).replace("&amp;", "&")) if phone_link else r
        sends = [f for f in forms_of(page.text).forms if f["action"] == "/authorize/reset/send"]
        assert sends, page.text[:1500]
        r = browser.http.post(provider.issuer + "/authorize/reset/send", data=sends[0]["inputs"])
        assert r.status_code == 429, (r.status_code, r.text[:600])
        assert re.search(r"[Ww]ait", r.text), re.sub(r"<[^>]+>", " ", r.text.split("<main")[1])[:600]
        assert [f for f in forms_of(r.text).forms if f["action"] == "/authorize/reset/send"]


def test_a_sign_in_text_refused_by_a_limit_does_not_say_a_code_was_sent():
    """"Text me a code" past the number's limit: the page says to wait above the button that sends, and does not
    claim a code was sent nor ask for one."""
    import re

    from oidc_support import running_provider
    from test_oidc_payments import payer

    with running_provider("--verify-number-burst", "1", "--verify-number-rate", "0.01") as provider:
        client = provider.register()
        user = payer(provider)  # the enrolment text took the number's one text
        browser = Browser(provider)
        r = browser.http.get(provider.authorize_url(client, state="t"), allow_redirects=False)
        page = browser.follow(r, None).response  # the email page
        flow = re.search(r"flow=([\w-]{43})", page.url).group(1)
        form = [f for f in forms_of(page.text).forms if f["action"] == "/authorize/sign-in"][0]
        r = browser.http.post(provider.issuer + "/authorize/sign-in", data=dict(form["inputs"], email=user.email))
        page = browser.follow(r, None).response
        form = [f for f in forms_of(page.text).forms if f["action"] == "/authorize/password"][0]
        r = browser.http.post(provider.issuer + "/authorize/password", data=dict(form["inputs"], password=user.password))
        page = browser.follow(r, None).response
        phone = re.search(r'href="(/authorize/second-factor\?[^"]*factor=[^"]+)"', page.text)
        if phone:
            page = browser.http.get(provider.issuer + phone.group(1).replace("&amp;", "&"))
        send = [f for f in forms_of(page.text).forms if f["action"] == "/authorize/second-factor/send"][0]
        r = browser.http.post(provider.issuer + "/authorize/second-factor/send", data=dict(send["inputs"], how="sms"),
                              allow_redirects=True)
        main = re.sub(r"<[^>]+>", " ", r.text.split("<main")[1])
        assert "Wait" in main and "sent a code" not in main and "Code from the text" not in main, main[:800]
        assert f"flow={flow}" in r.url


def test_a_refused_new_code_keeps_the_field_for_the_code_sent_and_the_first_text_is_not_called_new():
    """The first text: one sentence, not "a new code… earlier codes no longer work". "Send a new code" past the
    limit: the wait is said, and the field for the code already sent stays (it still works). A prompt=login with
    nobody signed in on the browser is a sign-in, not "Sign in again"."""
    import re

    from oidc_support import running_provider
    from test_oidc_payments import payer

    with running_provider("--verify-number-burst", "2", "--verify-number-rate", "0.01") as provider:
        client = provider.register()
        user = payer(provider)  # the enrolment text took one of the number's two
        browser = Browser(provider)
        r = browser.http.get(provider.authorize_url(client, state="t", prompt="login"), allow_redirects=False)
        page = browser.follow(r, None).response
        assert "Sign in again" not in page.text, "nobody was signed in on this browser"
        form = [f for f in forms_of(page.text).forms if f["action"] == "/authorize/sign-in"][0]
        r = browser.http.post(provider.issuer + "/authorize/sign-in", data=dict(form["inputs"], email=user.email))
        page = browser.follow(r, None).response
        form = [f for f in forms_of(page.text).forms if f["action"] == "/authorize/password"][0]
        r = browser.http.post(provider.issuer + "/authorize/password", data=dict(form["inputs"], password=user.password))
        page = browser.follow(r, None).response
        phone = re.search(r'href="(/authorize/second-factor\?[^"]*factor=[^"]+)"', page.text)
        if phone:
            page = browser.http.get(provider.issuer + phone.group(1).replace("&amp;", "&"))
        send = [f for f in forms_of(page.text).forms if f["action"] == "/authorize/second-factor/send"][0]
        first = browser.http.post(provider.issuer + "/authorize/second-factor/send",
                                  data=dict(send["inputs"], how="sms"), allow_redirects=True)
        main = re.sub(r"<[^>]+>", " ", first.text.split("<main")[1])
        assert "sent a code" in main and "Earlier codes no longer work" not in main, main[:600]
        again = [f for f in forms_of(first.text).forms if f["action"] == "/authorize/second-factor/send"][0]
        refused = browser.http.post(provider.issuer + "/authorize/second-factor/send",
                                    data=dict(again["inputs"], how="sms"), allow_redirects=True)
        main = re.sub(r"<[^>]+>", " ", refused.text.split("<main")[1])
        assert "Wait" in main, main[:600]
        assert 'name="code"' in refused.text, main[:600]
