"""Running the real Label Studio (PyPI, its own virtualenv) on loopback, for slow tests.

The virtualenv is made by ``make labelstudio`` under ``.cache/labelstudio-venv`` (``make
test`` makes it too), with a template data folder whose database is already migrated
(migrating takes minutes on 2 cores); each start copies it. Offline settings: no Sentry,
no analytics, no version check on PyPI; the ML backend may live on loopback.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
LS_VENV = ROOT / ".cache" / "labelstudio-venv"
LS_BIN = LS_VENV / "bin" / "label-studio"
LS_STAMP = LS_VENV / ".installed"
LS_TEMPLATE = LS_VENV / "template"
OFFLINE = {
    "SENTRY_DSN": "",
    "FRONTEND_SENTRY_DSN": "",
    "COLLECT_ANALYTICS": "false",
    "LATEST_VERSION_CHECK": "false",
    "ML_BLOCK_LOCAL_IP": "false",
    "SSRF_PROTECTION_ENABLED": "false",
}
USER, PASSWORD, USER_TOKEN = "annotator@example.com", "ls-password-123", "ls-user-token-0123456789"


@dataclass(frozen=True)
class LabelStudio:
    """A running Label Studio: its URL, an API client, and how long it took to start."""

    url: str
    api: httpx.Client
    started_s: float


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait(url: str, process: subprocess.Popen[bytes], log: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"Label Studio exited: {log.read_text(errors='replace')[-2000:]}")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(2)
    raise RuntimeError(
        f"Label Studio did not start in {timeout_s:.0f} s: {log.read_text()[-2000:]}"
    )


@contextmanager
def label_studio(data_dir: Path, timeout_s: float = 900) -> Iterator[LabelStudio]:
    """Start Label Studio with a fresh data folder; stop it afterwards."""
    port, log = free_port(), data_dir / "label-studio.log"
    data_dir.mkdir(parents=True, exist_ok=True)
    if (LS_TEMPLATE / "label_studio.sqlite3").exists():  # migrated once by the Makefile
        shutil.copytree(LS_TEMPLATE, data_dir / "data")
    command = [
        str(LS_BIN), "start", "--no-browser", "--internal-host", "127.0.0.1", "-p", str(port),
        "--username", USER, "--password", PASSWORD, "--user-token", USER_TOKEN,
        "--enable-legacy-api-token", "--data-dir", str(data_dir / "data"),
    ]  # fmt: skip
    env = {**os.environ, **OFFLINE}
    started = time.monotonic()
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        _wait(url, process, log, timeout_s)
        headers = {"Authorization": f"Token {USER_TOKEN}"}
        with httpx.Client(base_url=url, headers=headers, timeout=120) as api:
            yield LabelStudio(url, api, time.monotonic() - started)
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
