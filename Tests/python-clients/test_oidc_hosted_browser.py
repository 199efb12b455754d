"""The hosted sign-in in Debian's Chromium at phone size (390x844), on the unhappy paths a newcomer takes:
a wrong code and a reload, a code of the wrong shape, Back after the second step, a long address, a sign-in
that ended, and the authenticator-app setup reloaded; and the same pages in German, Arabic (right to left) and
the browser's French. No page may be a 5xx, raw JSON or a dead end."""

import json
import re
from pathlib import Path

import pytest

from oidc_support import ACR_MFA, CALLBACK, User, op  # noqa: F401

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    # The relying party's callback: a page that shows what came back.
    page.route(CALLBACK + "*", lambda route: route.fulfill(
        status=200, content_type="text/html", body="<!doctype html><title>Back at the app</title><h1>Back</h1>"))
    try:
        yield page
    finally:
        context.close()


def sign_in_to_code_step(page, op, client, user):
    page.goto(op.authorize_url(client, state="b"))
    page.get_by_label("Email").fill(user.email)
    page.get_by_role("button", name="Continue").click()
    page.get_by_label("Password").fill(user.password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/authorize/second-factor.*"))


def fits(page):
    return page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_a_wrong_code_comes_back_on_a_page_a_reload_does_not_post_again(page, op):
    client = op.register(first_party=True)
    user = op.user()
    sign_in_to_code_step(page, op, client, user)
    page.get_by_label("Code from your authenticator app").fill("000000" if user.totp.now() != "000000" else "111111")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*error=wrong.*"))
    assert page.get_by_role("alert").inner_text().startswith("That code did not work")
    answer = page.reload()  # a GET: no "Confirm Form Resubmission", no second wrong try
    assert answer.request.method == "GET" and answer.status == 422
    page.get_by_label("Code from your authenticator app").fill("12345")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*error=shape.*"))
    assert "not a code" in page.get_by_role("alert").inner_text()
    page.get_by_label("Code from your authenticator app").fill(user.next_code())
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(CALLBACK + "*")
    # Back from the app: the sign-in is done, so the flow answers again instead of asking for a stronger proof.
    page.go_back()
    assert "Confirm it is you" not in page.content()
    assert page.title() in ("Back at the app", "This sign-in has ended · " + client.registered["client_name"])
    if page.title().startswith("This sign-in has ended"):
        assert page.get_by_role("link", name=re.compile("Return to")).is_visible(), "an ended sign-in links back"


def test_a_long_address_fits_a_phone_screen_and_an_ended_sign_in_links_back_to_its_app(page, op):
    client = op.register(name="Acme Notes")
    user = User(email="a.very.long.address.that.goes.on.and.on.for.a.while." + "x" * 40 + "@example.com")
    page.goto(op.authorize_url(client, state="l"))
    page.get_by_label("Email").fill(user.email)
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url(re.compile(r".*/authorize/password.*"))
    assert fits(page), "the page is wider than the phone"
    flow = re.search(r"flow=([\w-]{43})", page.url).group(1)
    page.get_by_role("button", name="Cancel and return to Acme Notes").click()
    page.wait_for_url(CALLBACK + "*")
    # The cancelled flow opened again (a restored tab): a page that names the app and links back, never raw JSON.
    answer = page.goto(f"{op.issuer}/authorize/second-factor/send?flow={flow}")
    assert answer.status < 500 and "application/json" not in (answer.headers.get("content-type") or "")
    assert page.get_by_role("heading", level=1).inner_text()
    assert page.locator("main").get_by_role("link").count() + page.locator("main form").count() > 0, "a dead end"


def test_the_authenticator_app_setup_keeps_its_key_across_a_reload(page, op):
    client = op.register(first_party=True)
    user = op.user(totp=False)
    page.goto(op.authorize_url(client, acr_values=ACR_MFA, state="s"))
    page.get_by_label("Email").fill(user.email)
    page.get_by_role("button", name="Continue").click()
    page.get_by_label("Password").fill(user.password)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Set up an authenticator app").click()
    page.wait_for_url(re.compile(r".*/authorize/add-factor/app.*"))
    key = page.locator("[data-secret]").get_attribute("data-secret")
    page.reload()
    assert page.locator("[data-secret]").get_attribute("data-secret") == key, "a reload made a new key"
    assert page.get_by_role("link", name=re.compile("Add it to your authenticator app")).get_attribute(
        "href").startswith("otpauth://totp/")
    assert fits(page)


PAGES = Path(__file__).resolve().parents[2] / "Sources/TrifactorServer/Resources/pages"


def texts(language):
    """The hosted pages' sentences in `language`, with a filler for each placeholder's value."""
    messages = json.loads((PAGES / f"{language}.json").read_text())["messages"]

    def text(key, **values):
        out = messages[key]
        for name, value in values.items():
            out = out.replace("{" + name + "}", value)
        return out
    return text


def test_a_sign_in_asked_in_german_reads_german_from_the_email_to_a_wrong_code(page, op):
    t = texts("de")
    client = op.register(first_party=True, name="Acme Notes")
    user = op.user()
    page.goto(op.authorize_url(client, state="de", ui_locales="de-AT en"))
    assert page.locator("html").get_attribute("lang") == "de"
    assert page.get_by_role("heading", level=1).inner_text() == t("signin.title", client="Acme Notes")
    page.get_by_label(t("common.email")).fill(user.email)
    page.get_by_role("button", name=t("common.continue")).click()
    page.get_by_label(t("password.label"), exact=True).fill(user.password)
    page.get_by_role("button", name=t("common.sign_in"), exact=True).click()
    page.wait_for_url(re.compile(r".*/authorize/second-factor.*"))
    page.get_by_label(t("code.totp.label")).fill("000000" if user.totp.now() != "000000" else "111111")
    page.get_by_role("button", name=t("common.sign_in"), exact=True).click()
    page.wait_for_url(re.compile(r".*error=wrong.*"))
    assert page.get_by_role("alert").inner_text().startswith(t("code.wrong").split(".")[0])
    assert fits(page), "the German page is wider than the phone"
    page.get_by_label(t("code.totp.label")).fill(user.next_code())
    page.get_by_role("button", name=t("common.sign_in"), exact=True).click()
    page.wait_for_url(CALLBACK + "*")


def test_an_arabic_sign_in_is_right_to_left_and_fits_a_phone(page, op):
    t = texts("ar")
    client = op.register(name="Acme Notes")
    user = op.user()
    page.goto(op.authorize_url(client, state="ar", ui_locales="ar"))
    assert page.locator("html").get_attribute("dir") == "rtl"
    assert page.evaluate("getComputedStyle(document.querySelector('main')).direction") == "rtl"
    page.get_by_label(t("common.email")).fill(user.email)
    page.get_by_role("button", name=t("common.continue")).click()
    page.wait_for_url(re.compile(r".*/authorize/password.*"))
    # The address keeps its own direction inside the Arabic sentence, and nothing spills sideways.
    assert user.email in page.locator("main").inner_text()
    assert fits(page), "the Arabic page is wider than the phone"
    # The primary button sits at the start of its row: on the right in a right-to-left page.
    box = page.get_by_role("button", name=t("common.sign_in"), exact=True).bounding_box()
    assert box["x"] + box["width"] > PHONE["width"] / 2


def test_without_ui_locales_the_browser_language_chooses(browser, op):
    t = texts("fr")
    client = op.register(name="Acme Notes")
    context = browser.new_context(viewport=PHONE, locale="fr-FR")
    try:
        page = context.new_page()
        page.goto(op.authorize_url(client, state="fr"))
        assert page.locator("html").get_attribute("lang") == "fr"
        assert page.get_by_role("heading", level=1).inner_text() == t("signin.title", client="Acme Notes")
        # A page without its flow (a stale bookmark) speaks French too.
        answer = page.goto(f"{op.issuer}/authorize/password?flow=" + "A" * 43)
        assert answer.status == 400
        assert page.get_by_role("heading", level=1).inner_text() == t("lost.title")
    finally:
        context.close()
