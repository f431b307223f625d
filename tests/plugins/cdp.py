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


def load_page(url: str, ready_js: str, timeout: float = 60.0, login: tuple[str, str] | None = None) -> PageResult:
    """Open ``url`` in a fresh headless Chromium, wait until ``ready_js`` is true, return text and errors.

    ``login`` (user, password): the first page shown must be a login form (Airflow's login page after a
    redirect); it is filled in and submitted as a person would, then ``ready_js`` is awaited.
    """
    from websockets.sync.client import connect

    binary = chromium_binary()
    assert binary, "chromium is not installed"
    profile = Path(tempfile.mkdtemp(prefix="hbrep-chromium-"))
    proc = subprocess.Popen(
        [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + timeout
        port_file = profile / "DevToolsActivePort"
        while not (port_file.exists() and port_file.read_text().strip()):
            assert proc.poll() is None, f"chromium exited with {proc.returncode}"
            assert time.monotonic() < deadline, "chromium did not open its DevTools port"
            time.sleep(0.1)
        port = int(port_file.read_text().splitlines()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            targets = json.loads(response.read())
        ws_url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        errors: list[str] = []
        with connect(ws_url, max_size=None, open_timeout=20) as ws:
            ids = iter(range(1, 1_000_000))

            def send(method: str, **params: object) -> dict:
                msg_id = next(ids)
                ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
                while True:
                    msg = json.loads(ws.recv(timeout=max(1.0, deadline - time.monotonic())))
                    _collect(msg, errors)
                    if msg.get("id") == msg_id:
                        return msg.get("result", {})

            send("Runtime.enable")
            send("Log.enable")
            send("Page.enable")
            send("Page.navigate", url=url)
            if login is not None:
                _wait(send, "document.querySelector('input[type=password]') !== null", deadline, "login form")
                send("Runtime.evaluate", expression=_FILL_LOGIN % json.dumps(list(login)))
                _wait(send, "!document.querySelector('button[type=submit]').disabled", deadline, "enabled sign-in")
                send("Runtime.evaluate", expression="document.querySelector('button[type=submit]').click()")
            while True:
                value = send("Runtime.evaluate", expression=f"Boolean({ready_js})", returnByValue=True)
                if value.get("result", {}).get("value") is True:
                    break
                assert time.monotonic() < deadline, f"page {url} not ready ({ready_js}) within {timeout}s"
                time.sleep(0.2)
            # Let late console messages (e.g. from a second fetch) arrive before reading the page.
            with contextlib.suppress(TimeoutError):
                end = time.monotonic() + 1.0
                while time.monotonic() < end:
                    _collect(json.loads(ws.recv(timeout=max(0.05, end - time.monotonic()))), errors)
            text = send("Runtime.evaluate", expression="document.body.innerText", returnByValue=True)
        return PageResult(text["result"]["value"], errors)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


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


def _wait(send, js: str, deadline: float, what: str) -> None:
    while True:
        value = send("Runtime.evaluate", expression=f"Boolean({js})", returnByValue=True)
        if value.get("result", {}).get("value") is True:
            return
        assert time.monotonic() < deadline, f"{what} not shown ({js})"
        time.sleep(0.2)


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
