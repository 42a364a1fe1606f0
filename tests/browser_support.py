"""Headless chromium for the report tests, as a person opens a page: Debian's ``chromium``
with a proxy that answers nothing (:class:`Listener`), so every request the page makes is
recorded, and its console errors read from stderr.

Chromium itself also calls its own services (clock, component updates, accounts at
*.google.com, *.googleapis.com, *.gvt1.com) whatever the page; those are ignored by host.
"""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import threading

import pytest

#: Skips a test module when Debian's chromium is missing.
NEEDS_CHROMIUM = pytest.mark.skipif(shutil.which("chromium") is None,
                                    reason="Debian's chromium is not installed "
                                           "(scripts/system-deps.sh installs it)")

#: Chromium's own service hosts, contacted for any page (seen with an empty page here).
BROWSER_HOSTS = re.compile(r"(^|\.)(google\.com|googleapis\.com|gvt1\.com)$")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", "--no-default-browser-check", "--disable-default-apps",
         "--disable-domain-reliability", "--enable-logging=stderr", "--v=0"]


class Listener:
    """A TCP socket on 127.0.0.1 recording the first line of each connection (a proxy request
    line: ``GET http://host/...`` or ``CONNECT host:443``) and answering nothing; a connection
    closed without a byte is not recorded."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.lines: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    data = conn.recv(4096)
                    # a connection closed before it sent anything (Chromium's speculative
                    # preconnect to the proxy) asked for nothing: no request line, no request
                    if data:
                        self.lines.append(data.split(b"\r\n", 1)[0].decode("latin-1"))
                except OSError:
                    self.lines.append("(no request line)")

    def page_requests(self) -> list[str]:
        out = []
        for line in self.lines:
            m = re.match(r"\S+ (?:https?://)?([^/:\s]+)", line)
            if not (m and BROWSER_HOSTS.search(m.group(1))):
                out.append(line)
        return out

    def close(self):
        self._stop.set()
        self._thread.join(5)
        self.sock.close()


def chromium(url: str, tmp_path, proxy_port: int, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["chromium", *FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}",
         f"--proxy-server=http://127.0.0.1:{proxy_port}", "--proxy-bypass-list=<-loopback>",
         *extra, url], capture_output=True, text=True, timeout=90, cwd=tmp_path)


def console_errors(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines()
            if ":CONSOLE" in ln or "Uncaught" in ln or "Refused to" in ln]


@pytest.fixture
def listener():
    lst = Listener()
    yield lst
    lst.close()


__all__ = ["BROWSER_HOSTS", "FLAGS", "NEEDS_CHROMIUM", "Listener", "chromium",
           "console_errors", "listener"]
