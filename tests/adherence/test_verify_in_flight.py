"""A ``verify serve`` submission with 20 LLM rules is one round trip on a fresh process.

The limit on calls in flight starts at what is known (here the user's bound,
``DOCKET_MAX_IN_FLIGHT``), not at 8: all 20 rule checks go to the server at once.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

from tests.scripted_server import serve

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "in-flight-token-0123456789"
BODY = {
    "record": {"id": "d1", "turns": [{"role": "user", "text": "I need a ticket to Leeds"}]},
    "turn": {"role": "assistant", "text": "Happy to help."},
}


def _rules(tmp_path: Path, n: int = 20) -> Path:
    rules = [
        {"id": f"S{i}", "text": f"The turn does not mention topic {i}.", "tier": "sim",
         "scope": {"kind": "record"}}
        for i in range(n)
    ]  # fmt: skip
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"name": "twenty", "rules": rules}), encoding="utf-8")
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_up(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, process.communicate()
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "verify serve did not start"
        time.sleep(0.1)


def test_twenty_llm_rules_go_out_in_one_round_trip(tmp_path: Path) -> None:
    port = _free_port()
    with serve(lambda _body: "PASS", delay_s=0.3) as server:
        command = [
            sys.executable, "-m", "docket", "verify", "serve", "--rules", str(_rules(tmp_path)),
            "--model", server.model(), "--cache", "off", "--db", str(tmp_path / "v.db"),
            "--port", str(port),
        ]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "DOCKET_MAX_IN_FLIGHT": "32",
               "DOCKET_VERIFY_TOKEN": f"ann={TOKEN}"}  # fmt: skip
        process = subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_up(url, process)
            auth = {"Authorization": f"Bearer {TOKEN}"}
            response = httpx.post(url + "/v1/verify", json=BODY, headers=auth, timeout=30)
        finally:
            process.terminate()
            process.communicate(timeout=30)
    assert response.status_code == 200, response.text
    assert len(response.json()["results"]) == 20
    assert len(server.requests) == 20 and server.peak_in_flight == 20  # not 8, 16, then 20
