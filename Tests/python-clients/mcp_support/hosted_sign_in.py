"""Chromium (Debian's, through Playwright) signing a person in on Trifactor's hosted pages for the
MCP SDK's OAuth client.

Playwright's sync API lives on one thread: `BrowserThread` owns it (and one browser context, so
the person's Trifactor session cookie carries from one authorization to the next) and runs every
call there. `SignInHandlers` gives `OAuthClientProvider` its `redirect_handler` (open the
authorization URL, answer the pages until Trifactor redirects to the client's redirect_uri, a
listener on a loopback port of the test, as native agents have) and its `callback_handler` (that redirect's code,
state and iss).
"""

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import anyio

from mcp.client.auth import AuthorizationCodeResult

STEP_TIMEOUT_MS = 10_000


class BrowserThread:
    def __init__(self, chromium: str):
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chromium")
        self.context = self.run(self._start, chromium)

    def _start(self, chromium):
        from playwright.sync_api import sync_playwright

        self.playwright = sync_playwright().start()
        self.browser = self.playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"],
                                                       headless=True)
        return self.browser.new_context()

    def run(self, fn, *args):
        """`fn(*args)` on the browser's thread, waited for."""
        return self.pool.submit(fn, *args).result()

    def close(self):
        def stop():
            self.browser.close()
            self.playwright.stop()
        self.run(stop)
        self.pool.shutdown()


@dataclass
class Person:
    email: str
    password: str
    totp: object  # pyotp.TOTP
    # TOTP time steps already spent (enrollment, earlier sign-ins): Trifactor refuses a replay.
    spent_steps: set = field(default_factory=set)

    def fresh_code(self) -> str:
        """A code for a step within one of now and later than every step used (waiting if need be)."""
        while True:
            now = time.time()
            current = int(now // self.totp.interval)
            for step in (current - 1, current, current + 1):
                if step > max(self.spent_steps, default=-1):
                    self.spent_steps.add(step)
                    return self.totp.at(step * self.totp.interval)
            time.sleep(0.5)


class LoopbackRedirect:
    """The agent's redirect_uri: a listener on a loopback port (RFC 8252 §7.3), as native MCP clients
    do, that remembers every request's URL and answers with a short page."""

    def __init__(self):
        received = self.received = []

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                received.append(f"http://127.0.0.1:{self.server.server_port}{self.path}")
                body = b"Signed in. You can return to the agent."
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.uri = f"http://127.0.0.1:{self.httpd.server_port}/callback"
        threading.Thread(target=self.httpd.serve_forever, name="redirect-uri", daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


class SignInHandlers:
    """The redirect and callback handlers of one OAuthClientProvider."""

    def __init__(self, browser: BrowserThread, person: Person):
        self.browser, self.person = browser, person
        self.loopback = LoopbackRedirect()
        self.redirect_uri = self.loopback.uri
        self.authorization_urls: list = []
        self.pages: list = []  # per authorization: the hosted pages answered, by path
        self.redirects: list = []

    def close(self):
        self.loopback.close()

    async def redirect_handler(self, authorization_url: str) -> None:
        self.authorization_urls.append(authorization_url)
        pages, landed = await anyio.to_thread.run_sync(self.browser.run, self._drive, authorization_url)
        self.pages.append(pages)
        self.redirects.append(landed)

    async def callback_handler(self) -> AuthorizationCodeResult:
        query = parse_qs(urlparse(self.redirects[-1]).query)
        if "error" in query:
            raise AssertionError(f"Trifactor answered the authorization with an error: {self.redirects[-1]}")
        first = {k: v[0] for k, v in query.items()}
        return AuthorizationCodeResult(code=first.get("code", ""), state=first.get("state"), iss=first.get("iss"))

    def _drive(self, url: str):
        """On the browser thread: the pages answered and the redirect_uri URL Trifactor sent the browser to."""
        page = self.browser.context.new_page()
        seen = len(self.loopback.received)
        pages = []
        try:
            page.goto(url)
            for _ in range(8):
                if len(self.loopback.received) > seen:
                    break
                before = page.url
                path = urlparse(before).path
                pages.append(path)
                if path == "/authorize/sign-in":
                    page.get_by_label("Email").fill(self.person.email)
                    page.get_by_role("button", name="Continue").click()
                elif path == "/authorize/password":
                    page.get_by_label("Password").fill(self.person.password)
                    page.get_by_role("button", name="Sign in").click()
                elif path == "/authorize/second-factor":
                    page.get_by_label("Code from your authenticator app").fill(self.person.fresh_code())
                    page.get_by_role("button", name="Sign in").click()
                elif path == "/authorize/consent":
                    page.get_by_role("button", name="Allow").click()
                else:
                    raise AssertionError(f"unexpected page {page.url}:\n{page.inner_text('body')[:2000]}")
                page.wait_for_url(lambda u: u != before, timeout=STEP_TIMEOUT_MS)
                page.wait_for_load_state()
            if len(self.loopback.received) <= seen:
                raise AssertionError(f"no redirect to {self.redirect_uri} after pages {pages}; now at "
                                     f"{page.url}:\n{page.inner_text('body')[:2000]}")
            return pages, self.loopback.received[seen]
        finally:
            page.close()
