"""Live-server and browser pieces shared by the HTTP and page tests of review and adherence."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import uvicorn

CHROMIUM = Path("/usr/bin/chromium")
"""Debian's Chromium, driven by Playwright (its own browser downloads are not used)."""
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]


@contextmanager
def serve(app: Any, timeout_s: float = 15.0) -> Iterator[str]:
    """Run ``app`` with uvicorn on a free loopback port in a thread; yield its base URL.

    The socket is bound here and handed to uvicorn, so no other process can take the
    port between choosing and binding it.

    Raises:
        RuntimeError: the server did not start within ``timeout_s`` seconds.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        try:
            _wait_until_started(server, thread, timeout_s)
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True
            thread.join(timeout=10)


def _wait_until_started(server: uvicorn.Server, thread: threading.Thread, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("test server did not start")
        time.sleep(0.02)


@contextmanager
def chromium() -> Iterator[Any]:
    """Launch headless :data:`CHROMIUM` through Playwright; yield the browser, close it after."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
