"""A small headless-Chromium driver for the page tests: the DevTools protocol over a pipe, no packages.

Chromium started with ``--remote-debugging-pipe`` reads protocol commands from file descriptor 3
and writes replies and events to descriptor 4, each message JSON ended by a NUL byte (the
transport Puppeteer and Playwright use). :class:`Chromium` opens one page, intercepts every request
it makes (``Fetch.enable`` on all URLs: the page's own file is let through, anything else is failed
and recorded), records console errors, exceptions and log errors, evaluates JavaScript, takes
screenshots and prints to PDF. The browser runs with a fresh profile and no network features, and
it is killed when the driver closes.

Run as a script to take the screenshots of the docs::

    python tests/report/chromium.py PAGE.html OUT.png [WIDTH]
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The flags the project runs Chromium with: headless, no sandbox (CI runs as root), and every
# background feature that could reach a network off.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--disable-extensions", "--mute-audio", "--hide-scrollbars",
         "--host-resolver-rules=MAP * ~NOTFOUND", "--remote-debugging-pipe")
TIMEOUT_S = 60.0
_BASH = shutil.which("bash") or "/bin/bash"


def find_chromium() -> str | None:
    """The Chromium executable: ``$DESIGNER_CHROMIUM``, else ``chromium`` or ``chromium-browser`` on PATH."""
    env = os.environ.get("DESIGNER_CHROMIUM")
    if env:
        return env if os.access(env, os.X_OK) else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _above(fd: int, low: int = 10) -> int:
    """``fd`` moved to the lowest free descriptor >= ``low`` (the old one closed)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, low)
    os.close(fd)
    return moved


def _add(items: list[str], url: str) -> None:
    if url not in items:
        items.append(url)


class BrowserError(RuntimeError):
    """The browser died, answered with an error, or did not answer in time."""


@dataclass
class PageLog:
    """What one page load did, each URL once.

    Attributes:
        url: the page's own file URL.
        requests: every URL the page asked for (``Network.requestWillBeSent``).
        fetched: the URLs that reached the network stack (``Fetch.requestPaused``): the page's
            file is let through, every other one is failed and listed in ``blocked`` as well.
        blocked: URLs failed by the driver: a request outside the file.
        refused: URLs the page's content security policy refused before any request was made.
        errors: console errors and warnings, uncaught exceptions, and error or warning log entries.
    """

    url: str
    requests: list[str] = field(default_factory=list)
    fetched: list[str] = field(default_factory=list)
    blocked: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _ids: dict[str, str] = field(default_factory=dict)


class Chromium:
    """One headless Chromium with one page, driven over the DevTools pipe."""

    def __init__(self, executable: str, *, width: int = 1280, height: int = 900):
        self.profile = tempfile.mkdtemp(prefix="designer-chromium-")
        cmd_r, cmd_w = os.pipe()  # we write commands; Chromium reads them on fd 3
        out_r, out_w = os.pipe()  # Chromium writes on fd 4; we read
        # Move the child's ends above 9 so that putting them on 3 and 4 overwrites neither.
        cmd_r, out_w = (_above(fd) for fd in (cmd_r, out_w))
        args = [*FLAGS, f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"]
        # bash (dash takes one-digit descriptors only) puts the two pipe ends on descriptors 3 and 4, where Chromium looks for them.
        script = f'exec "$0" "$@" 3<&{cmd_r} 4>&{out_w} {cmd_r}<&- {out_w}>&-'
        self.proc = subprocess.Popen([_BASH, "-c", script, executable, *args], pass_fds=(cmd_r, out_w),
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, start_new_session=True)
        os.close(cmd_r)
        os.close(out_w)
        self._out = os.fdopen(cmd_w, "wb", buffering=0)
        self._in = os.fdopen(out_r, "rb", buffering=0)
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._next = 0
        self._replies: dict[int, dict] = {}
        self._events: list[dict] = []
        self._closed = False
        self.log: PageLog | None = None
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for method in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
            self.send(method, session=self.session)
        self.send("Fetch.enable", session=self.session, patterns=[{"urlPattern": "*"}])
        self.send("Emulation.setDeviceMetricsOverride", session=self.session, width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    # ------------------------------------------------------------ transport

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = self._in.read(65536)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cond:
                    self._closed = True
                    self._cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                if "id" in msg:
                    with self._cond:
                        self._replies[msg["id"]] = msg
                        self._cond.notify_all()
                else:
                    self._event(msg)

    def _write(self, msg: dict) -> None:
        with self._lock:
            self._out.write(json.dumps(msg).encode() + b"\0")

    def send(self, method: str, *, session: str | None = None, **params: Any) -> dict:
        """Send one command and wait for its reply; raise :class:`BrowserError` on an error reply."""
        with self._cond:
            self._next += 1
            mid = self._next
        msg: dict[str, Any] = {"id": mid, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        self._write(msg)
        deadline = time.monotonic() + TIMEOUT_S
        with self._cond:
            while mid not in self._replies:
                if self._closed:
                    raise BrowserError(f"Chromium exited while waiting for {method}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BrowserError(f"no answer to {method} in {TIMEOUT_S:g} s")
                self._cond.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise BrowserError(f"{method}: {reply['error']}")
        return reply.get("result", {})

    def _event(self, msg: dict) -> None:
        method, params = msg.get("method", ""), msg.get("params", {})
        log = self.log
        if method == "Fetch.requestPaused":
            url = params["request"]["url"]
            allowed = log is not None and url.split("#")[0] == log.url
            if log is not None:
                _add(log.fetched, url)
                if not allowed:
                    _add(log.blocked, url)
            command = "Fetch.continueRequest" if allowed else "Fetch.failRequest"
            extra = {} if allowed else {"errorReason": "BlockedByClient"}
            self._write({"id": 0, "method": command, "sessionId": msg.get("sessionId"),
                         "params": {"requestId": params["requestId"], **extra}})
            return
        if log is not None:
            if method == "Network.requestWillBeSent":
                log._ids[params["requestId"]] = params["request"]["url"]
                _add(log.requests, params["request"]["url"])
            elif method == "Network.loadingFailed" and params.get("blockedReason") == "csp":
                _add(log.refused, log._ids.get(params["requestId"], "?"))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert", "warning"):
                text = " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", []))
                log.errors.append(f"console.{params['type']}: {text}")
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                log.errors.append("exception: " + str(details.get("exception", {}).get("description")
                                                     or details.get("text")))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") in ("error", "warning"):
                entry = params["entry"]
                log.errors.append(f"log {entry.get('source')}: {entry.get('text')}")
        with self._cond:
            self._events.append(msg)
            self._cond.notify_all()

    def _wait_event(self, method: str, since: int) -> dict:
        deadline = time.monotonic() + TIMEOUT_S
        with self._cond:
            while True:
                for msg in self._events[since:]:
                    if msg.get("method") == method:
                        return msg
                if self._closed:
                    raise BrowserError(f"Chromium exited while waiting for {method}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BrowserError(f"no {method} in {TIMEOUT_S:g} s")
                self._cond.wait(left)

    # ------------------------------------------------------------ pages

    def open(self, path: Path) -> PageLog:
        """Load a local file and wait for its load event; returns the page's log (filled as it goes)."""
        url = Path(path).resolve().as_uri()
        self.log = PageLog(url)
        with self._cond:
            since = len(self._events)
        self.send("Page.navigate", session=self.session, url=url)
        self._wait_event("Page.loadEventFired", since)
        return self.log

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable values only)."""
        result = self.send("Runtime.evaluate", session=self.session, expression=expression, returnByValue=True,
                           awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression[:60]}...: {result['exceptionDetails'].get('text')}")
        return result["result"].get("value")

    def media(self, media: str) -> None:
        """Emulate a CSS media type (``print``, ``screen`` or ``""`` for none)."""
        self.send("Emulation.setEmulatedMedia", session=self.session, media=media)

    def screenshot(self, out: Path, *, full_page: bool = True) -> Path:
        """A PNG of the page (the whole page when ``full_page``)."""
        params: dict[str, Any] = {"format": "png"}
        if full_page:
            size = self.send("Page.getLayoutMetrics", session=self.session)["cssContentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1})
        data = self.send("Page.captureScreenshot", session=self.session, **params)["data"]
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(data))
        return out

    def pdf(self) -> bytes:
        """The page printed to PDF on A4, with the page's print style sheet."""
        data = self.send("Page.printToPDF", session=self.session, paperWidth=8.27, paperHeight=11.69,
                         preferCSSPageSize=True, printBackground=False)["data"]
        return base64.b64decode(data)

    def close(self) -> None:
        """Stop the browser (its whole process group) and remove its profile."""
        try:
            self.send("Browser.close")
        except BrowserError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(timeout=10)
        for stream in (self._out, self._in):
            try:
                stream.close()
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)


def main(argv: list[str]) -> int:
    page, out = Path(argv[0]), Path(argv[1])
    width = int(argv[2]) if len(argv) > 2 else 1280
    exe = find_chromium()
    if exe is None:
        print("chromium not found", file=sys.stderr)
        return 2
    browser = Chromium(exe, width=width)
    try:
        log = browser.open(page)
        browser.screenshot(out)
        print(f"{out}: requests {log.requests}, blocked {log.blocked}, refused {log.refused}, errors {log.errors}")
    finally:
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
