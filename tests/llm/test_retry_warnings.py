"""Retry warnings against a dead server: one line per model every few seconds, not one a retry."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_verify_against_a_dead_server_warns_once_before_its_error_line() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    sop = ROOT / "examples" / "sop"
    command = [sys.executable, "-m", "docket", "verify", "--rules", str(sop / "rules.yaml"),
               str(sop / "dialogues.jsonl"), "--model", f"openai-compatible:http://127.0.0.1:{port}/v1#m",
               "--cache", "off"]  # fmt: skip
    env = {**os.environ, "DOCKET_MAX_RETRIES": "2"}  # 84 LLM checks, 168 retries
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 2
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    # The first failure at once; the rest within the same few seconds are counted, not told.
    assert 1 <= len(warnings) <= 2 and "ClientConnectorError" in warnings[0]
    assert len(errors) == 1 and "could not reach their model" in errors[0]
