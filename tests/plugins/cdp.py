"""Headless Chromium driven over the DevTools protocol: load a page, collect console errors, read its text."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--remote-debugging-port=0",
    "--remote-allow-origins=*",
]


@dataclass
class PageResult:
    """What the page showed (``document.body.innerText``) and every console error / uncaught exception."""

    text: str
    errors: list[str] = field(default_factory=list)


def chromium_binary() -> str | None:
    """The Chromium executable, or None when it is not installed (``make chromium`` installs it)."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


class Browser:
    """A fresh headless Chromium (own profile) with one page, driven over the DevTools protocol.

    ``with Browser() as page: page.navigate(url); page.wait_for(js); page.evaluate(js)``; console errors
    and uncaught exceptions collect in ``errors``.
    """

    def __init__(self, timeout: float = 60.0) -> None:
        self.timeout = timeout
        self.errors: list[str] = []
        self._ids = iter(range(1, 1_000_000))

    def __enter__(self) -> Browser:
        from websockets.sync.client import connect

        binary = chromium_binary()
        assert binary, "chromium is not installed"
        self.profile = Path(tempfile.mkdtemp(prefix="hbrep-chromium-"))
        self.proc = subprocess.Popen(
            [binary, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + self.timeout
            port_file = self.profile / "DevToolsActivePort"
            while not (port_file.exists() and port_file.read_text().strip()):
                assert self.proc.poll() is None, f"chromium exited with {self.proc.returncode}"
                assert time.monotonic() < deadline, "chromium did not open its DevTools port"
                time.sleep(0.1)
            port = int(port_file.read_text().splitlines()[0])
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
                targets = json.loads(response.read())
            ws_url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
            self.ws = connect(ws_url, max_size=None, open_timeout=20)
            self.send("Runtime.enable")
            self.send("Log.enable")
            self.send("Page.enable")
        except BaseException:
            self._stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()
        self._stop()

    def _stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def send(self, method: str, timeout: float | None = None, **params: object) -> dict:
        """One DevTools command; its result (events received meanwhile feed ``errors``)."""
        msg_id = next(self._ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            msg = json.loads(self.ws.recv(timeout=max(0.5, deadline - time.monotonic())))
            _collect(msg, self.errors)
            if msg.get("id") == msg_id:
                return msg.get("result", {})

    def navigate(self, url: str) -> None:
        """Load ``url`` in the page."""
        self.send("Page.navigate", url=url)

    def evaluate(self, expression: str) -> object:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.send("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression[:80]}: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    def wait_for(self, expression: str, timeout: float | None = None) -> None:
        """Wait until ``expression`` is truthy in the page (AssertionError on timeout)."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            with contextlib.suppress(AssertionError):
                if self.evaluate(f"Boolean({expression})") is True:
                    return
            assert time.monotonic() < deadline, f"not true within {timeout or self.timeout:.0f}s: {expression}"
            time.sleep(0.3)

    def type_into(self, selector: str, text: str) -> None:
        """Focus the element ``selector``, select what it holds and type ``text`` (real input events)."""
        found = self.evaluate(
            f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return false;"
            " e.scrollIntoView({block: 'center'}); e.focus(); if (e.select) e.select(); return true; })()"
        )
        assert found, f"no element {selector}"
        self.send("Input.insertText", text=text)

    def click_text(self, selector: str, text: str) -> None:
        """Click the first element matching ``selector`` whose text is ``text`` (trimmed)."""
        clicked = self.evaluate(
            f"(() => {{ const e = Array.from(document.querySelectorAll({json.dumps(selector)}))"
            f".find(n => n.innerText.trim() === {json.dumps(text)} && !n.disabled); if (!e) return false;"
            " e.scrollIntoView({block: 'center'}); e.click(); return true; })()"
        )
        assert clicked, f"no enabled {selector} reading {text!r}"

    def text(self) -> str:
        """``document.body.innerText``."""
        return str(self.evaluate("document.body.innerText"))

    def drain(self, seconds: float = 1.0) -> None:
        """Read the events of the next ``seconds`` (late console errors land in ``errors``)."""
        with contextlib.suppress(TimeoutError):
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                _collect(json.loads(self.ws.recv(timeout=max(0.05, end - time.monotonic()))), self.errors)


def load_page(url: str, ready_js: str, timeout: float = 60.0, login: tuple[str, str] | None = None) -> PageResult:
    """Open ``url`` in a fresh headless Chromium, wait until ``ready_js`` is true, return text and errors.

    ``login`` (user, password): the first page shown must be a login form (Airflow's login page after a
    redirect); it is filled in and submitted as a person would, then ``ready_js`` is awaited.
    """
    with Browser(timeout) as page:
        page.navigate(url)
        if login is not None:
            page.wait_for("document.querySelector('input[type=password]') !== null")
            page.evaluate(_FILL_LOGIN % json.dumps(list(login)))
            page.wait_for("!document.querySelector('button[type=submit]').disabled")
            page.evaluate("document.querySelector('button[type=submit]').click()")
        try:
            page.wait_for(ready_js)
        except AssertionError:
            raise AssertionError(f"page {url} not ready ({ready_js}) within {timeout}s") from None
        # Let late console messages (e.g. from a second fetch) arrive before reading the page.
        page.drain(1.0)
        return PageResult(page.text(), page.errors)


# React controls the login inputs: set them through the native setter and fire "input"; the sign-in
# button is enabled once the form validated.
_FILL_LOGIN = """(() => {
  const [user, password] = %s;
  const set = (el, v) => {
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(el, v);
    el.dispatchEvent(new Event("input", {bubbles: true}));
  };
  set(document.querySelector("input[name=username], input[type=text]"), user);
  set(document.querySelector("input[type=password]"), password);
})()"""


def _collect(msg: dict, errors: list[str]) -> None:
    method = msg.get("method")
    params = msg.get("params", {})
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        errors.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params["args"]))
    elif method == "Runtime.exceptionThrown":
        details = params.get("exceptionDetails", {})
        errors.append("exception: " + str(details.get("exception", {}).get("description", details.get("text"))))
    elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
        entry = params["entry"]
        errors.append(f"log: {entry.get('text')} {entry.get('url', '')}")
