"""Shared by the web benchmarks: latency of small requests while a stranger floods the app.

One client without a token posts the worst bodies under the size limit back to back
(flat arrays, a record of 100,000 empty turns, nesting just under and far past the
depth limit) while probes (a public page and a small authenticated request) are timed.
The target (issue 19): every probe's p95 under 50 ms. A "floor" row times the same
loop against a bare FastAPI app, so a busy machine's own latency is visible. Used by
``benchmarks/verify_serve_load.py`` and ``benchmarks/review_app.py``.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import socket
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx
import uvicorn
from _table import Table, print_tables

TARGET_P95_MS = 50.0


@dataclass
class Probe:
    """A small request timed during the flood."""

    name: str
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None


def start(app: object) -> tuple[str, uvicorn.Server, threading.Thread]:
    """Run ``app`` on a free loopback port in a thread."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    return f"http://127.0.0.1:{sock.getsockname()[1]}", server, thread


def start_process(factory: Callable[[], object]) -> tuple[str, Callable[[], None]]:
    """Run ``factory()``'s app in a forked server process (its own GIL); return url, stop."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"

    def serve() -> None:
        uvicorn.Server(uvicorn.Config(factory(), log_level="warning")).run(sockets=[sock])

    child = multiprocessing.get_context("fork").Process(target=serve, daemon=True)
    child.start()
    for _ in range(500):
        try:
            httpx.get(url + "/login", timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.02)

    def stop() -> None:
        if child.pid is not None:
            os.kill(child.pid, 15)
        child.join(timeout=10)
        sock.close()

    return url, stop


def worst_bodies(max_bytes: int, depth: int) -> dict[str, bytes]:
    """JSON bodies just under ``max_bytes`` that are costly to parse or to walk."""
    room = max_bytes - 64
    flat = b"[" + b"0," * (room // 2 - 1) + b"0]"
    empty_turn = b'{"role":"u","text":""},'
    turns = min(100_000, room // len(empty_turn))
    record = b'{"record":{"id":"f","turns":[' + empty_turn * (turns - 1) + empty_turn[:-1] + b"]}}"
    unit = b"[" * depth + b"0" + b"]" * depth + b","
    nested = b"[" + unit * (room // len(unit)) + b"0]"
    return {
        "flat array": flat,
        f"{turns} empty turns": record,
        f"depth {depth} repeated": nested,
        "depth 100,000": b"[" * (room // 2) + b"]" * (room // 2),
    }


def _time(client: httpx.Client, url: str, probe: Probe) -> float:
    started = time.perf_counter()
    response = client.request(
        probe.method, url + probe.path, headers=probe.headers, content=probe.body
    )
    elapsed = time.perf_counter() - started
    if response.status_code >= 400:
        raise RuntimeError(f"probe {probe.name}: HTTP {response.status_code} {response.text[:200]}")
    return elapsed


def _summary(latencies: list[float]) -> dict[str, float]:
    ms = sorted(x * 1000 for x in latencies)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    return {"n": len(ms), "p50_ms": statistics.median(ms), "p95_ms": p95, "max_ms": ms[-1]}


def flood(
    url: str, path: str, bodies: dict[str, bytes], probes: list[Probe], seconds: float
) -> dict:
    """Probe latencies while one tokenless client posts ``bodies`` to ``path`` (none: quiet)."""
    stop, statuses, lock = threading.Event(), Counter(), threading.Lock()

    def stranger() -> None:
        with httpx.Client(timeout=120) as client:
            while not stop.is_set():
                for name, body in bodies.items():
                    headers = {"Content-Type": "application/json", "Accept": "application/json"}
                    status = client.post(url + path, content=body, headers=headers).status_code
                    with lock:
                        statuses[f"{name}: {status}"] += 1

    attacker = threading.Thread(target=stranger, daemon=True)
    if bodies:
        attacker.start()
        time.sleep(0.5)
    latencies: dict[str, list[float]] = {p.name: [] for p in probes}
    deadline = time.monotonic() + seconds
    with httpx.Client(timeout=120) as client:
        while time.monotonic() < deadline:
            for probe in probes:
                latencies[probe.name].append(_time(client, url, probe))
            time.sleep(0.01)
    stop.set()
    if bodies:
        attacker.join(timeout=300)
    return {
        "stranger_requests": dict(statuses),
        "probes": {k: _summary(v) for k, v in latencies.items()},
    }


def _bare_app() -> object:
    from fastapi import FastAPI

    app = FastAPI()
    app.add_api_route("/login", lambda: {}, methods=["GET"])
    return app


def floor(seconds: float) -> dict:
    """The machine's floor: the same probe loop against a bare FastAPI app (no docket)."""
    url, stop = start_process(_bare_app)
    try:
        return flood(url, "/login", {}, [Probe("GET (bare FastAPI app)", "GET", "/login")], seconds)
    finally:
        stop()


def run(url: str, path: str, bodies: dict[str, bytes], probes: list[Probe], seconds: float) -> dict:
    """The machine's floor, probes on a quiet server, then under the flood; print a table."""
    rows = {
        "floor": floor(seconds),
        "quiet": flood(url, path, {}, probes, seconds),
        "flood": flood(url, path, bodies, probes, seconds),
    }
    print_tables([flood_table(rows)])
    return rows


def flood_table(rows: dict) -> Table:
    """Probe latencies per phase against the p95 target; the strangers' answers as a note."""
    table = Table(["phase", "probe", "n", "p50 ms", "p95 ms", "max ms", "p95 < 50 ms"])
    for phase, row in rows.items():
        for name, s in row["probes"].items():
            table.add(phase, name, s["n"], s["p50_ms"], s["p95_ms"], s["max_ms"],
                      s["p95_ms"] < TARGET_P95_MS)  # fmt: skip
    table.notes.append("stranger requests: " + json.dumps(rows["flood"]["stranger_requests"]))
    return table
