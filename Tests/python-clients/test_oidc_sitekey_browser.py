"""The sitekey on the hosted password page, in Debian's Chromium: a browser Trifactor does not know shows the
neutral sentence; after a sign-in there that passed a second factor, the same browser shows the account's
picture and phrase above the password; another account's email in that browser sees the neutral sentence
again, word for word as a stranger does; and "Forget this browser" makes it a stranger again."""

import re

import pytest

from oidc_support import CALLBACK, op  # noqa: F401
from test_oidc_hosted_browser import texts

OWL = ("owl", "night watch")


@pytest.fixture
def context(browser):
    context = browser.new_context()
    context.route(CALLBACK + "*", lambda route: route.fulfill(
        status=200, content_type="text/html", body="<!doctype html><title>Back at the app</title><h1>Back</h1>"))
    try:
        yield context
    finally:
        context.close()


def password_page(page, op, client, email, **params):
    """The hosted password page for `email`; returns the sitekey card's text."""
    page.goto(op.authorize_url(client, state="sk", **params))
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url(re.compile(r".*/authorize/password.*"))
    return page.locator("[data-sitekey]").inner_text()


def assert_neutral(page, card):
    t = texts("en")
    assert card == t("sitekey.neutral")
    assert page.locator("[data-sitekey]").get_attribute("data-sitekey") == "none"
    assert page.locator("img[src^='/sitekeys/']").count() == 0
    assert OWL[1] not in page.content()


def test_the_sitekey_shows_only_in_a_browser_that_signed_in_to_that_account_with_a_second_factor(context, op):
    t = texts("en")
    client = op.register(first_party=True, name="Acme Bank")
    ann = op.user(sitekey=OWL)
    bob = op.user(sitekey=("kite", "windy hill"))
    page = context.new_page()

    # A browser Trifactor has never seen: the neutral sentence, for a real account and for nobody alike.
    assert_neutral(page, password_page(page, op, client, ann.email))
    stranger = password_page(page, op, client, "nobody-here@example.com")
    assert_neutral(page, stranger)

    # A sign-in with the password and the authenticator app: the browser is recognised for Ann's account.
    password_page(page, op, client, ann.email)
    page.get_by_label("Password", exact=True).fill(ann.password)
    page.get_by_role("button", name="Sign in", exact=True).click()
    page.wait_for_url(re.compile(r".*/authorize/second-factor.*"))
    page.get_by_label("Code from your authenticator app").fill(ann.next_code())
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(CALLBACK + "*")
    known = [c for c in context.cookies() if c["name"] == "tf_known"]
    assert len(known) == 1 and known[0]["httpOnly"] and known[0]["expires"] > 0, known

    # The same browser, signing in again: Ann's picture and phrase above the password.
    card = password_page(page, op, client, ann.email, prompt="login")
    assert page.locator("[data-sitekey]").get_attribute("data-sitekey") == "shown"
    assert OWL[1] in card and t("sitekey.shown") in card
    picture = page.locator("[data-sitekey] img")
    assert picture.get_attribute("src") == "/sitekeys/owl.svg"
    assert picture.get_attribute("alt") == t("sitekey.picture")
    assert page.evaluate("document.querySelector('[data-sitekey] img').naturalWidth") > 0, "the picture did not load"
    assert page.get_by_text(t("sitekey.check")).is_visible()

    # Another account's email in Ann's browser: the stranger's page, word for word.
    page.get_by_role("link", name="Not you? Use another email").click()
    page.get_by_label("Email").fill(bob.email)
    page.get_by_role("button", name="Continue").click()
    page.wait_for_url(re.compile(r".*/authorize/password.*"))
    card = page.locator("[data-sitekey]").inner_text()
    assert card == stranger
    assert_neutral(page, card)
    assert "windy hill" not in page.content()

    # "Forget this browser": Ann's email shows the neutral sentence again.
    password_page(page, op, client, ann.email, prompt="login")
    page.get_by_role("button", name=t("sitekey.forget")).click()
    page.wait_for_url(re.compile(r".*forgotten=1.*"))
    assert page.get_by_role("status").inner_text() == t("sitekey.forgotten")
    assert_neutral(page, page.locator("[data-sitekey]").inner_text())
    assert not [c for c in context.cookies() if c["name"] == "tf_known"]
