"""Can one large request freeze ``verify serve``? Health-check latency under a long submission.

Starts the verification API on loopback with the 20-rule example set (its 8 fmt rules; the
sim/sub rules are left out so no model is needed), sends submissions of many turns, and
while each is being verified measures how long ``GET /health`` takes: with the work in a
worker thread and linear prompt fitting, the health check stays fast. Also times the
refusal of a request of 100,000 empty turns. Then (issue 19) a stranger without a token
posts the worst bodies under the 8 MiB limit back to back while ``GET /health`` and a
small authenticated ``POST /v1/verify`` are timed: target p95 < 50 ms for both.

    .venv/bin/python benchmarks/verify_serve_load.py [--turns 500 1000 1999] [--flood-seconds 10]

Prints a table and writes ``benchmarks/results/verify_serve_load.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx

from docket.adherence.rules import load_rules
from docket.adherence.verify import Verifier
from docket.adherence.web.api import DEFAULT_SETTINGS, create_app

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _table import Table, print_tables, write_results  # noqa: E402
from stranger_flood import Probe, flood_table, start, start_process, worst_bodies  # noqa: E402
from stranger_flood import run as run_flood  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TOKEN = "bench-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def body(turns: int, text: str = "Hello, I need a ticket to Leeds please.") -> dict:
    """A record of ``turns`` alternating turns plus one new turn."""
    record = [{"role": ("user", "assistant")[i % 2], "text": text} for i in range(turns)]
    return {"record": {"id": "load", "turns": record}, "turn": {"role": "user", "text": "ok"}}


def health_during(url: str, payload: dict) -> dict[str, float]:
    """Seconds of the big request, and health-check latencies while it runs."""
    latencies: list[float] = []
    done = threading.Event()
    result: dict[str, float] = {}

    def big() -> None:
        started = time.perf_counter()
        response = httpx.post(url + "/v1/verify", json=payload, headers=AUTH, timeout=600)
        result["status"] = response.status_code
        result["request_s"] = time.perf_counter() - started
        done.set()

    worker = threading.Thread(target=big)
    worker.start()
    with httpx.Client() as client:
        while not done.is_set():
            started = time.perf_counter()
            client.get(url + "/health", timeout=600)
            latencies.append(time.perf_counter() - started)
            time.sleep(0.01)
    worker.join()
    result["health_checks"] = len(latencies)
    result["health_p50_ms"] = statistics.median(latencies) * 1000 if latencies else 0.0
    result["health_max_ms"] = max(latencies) * 1000 if latencies else 0.0
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[500, 1000, 1999])
    parser.add_argument("--flood-seconds", type=float, default=10.0)
    args = parser.parse_args()
    ruleset = load_rules(ROOT / "examples" / "sop" / "rules.yaml")
    fmt_only = ruleset.model_copy(update={"rules": ruleset.by_tier("fmt")})
    url, server, thread = start(create_app(Verifier(fmt_only), tokens={TOKEN: "bench"}))
    rows = {}
    try:
        for turns in args.turns:
            rows[str(turns)] = health_during(url, body(turns))
        started = time.perf_counter()
        flood = {"record": {"id": "flood", "turns": [{"role": "u", "text": ""}] * 100_000}}
        refused = httpx.post(url + "/v1/verify", json=flood, headers=AUTH, timeout=600)
        refusal = {"status": refused.status_code, "seconds": time.perf_counter() - started}
    finally:
        server.should_exit = True
        thread.join(timeout=10)
    small = json.dumps(body(2)).encode()
    probes = [
        Probe("GET /health", "GET", "/health"),
        Probe(
            "POST /v1/verify (2 turns)",
            "POST",
            "/v1/verify",
            {**AUTH, "Content-Type": "application/json"},
            small,
        ),
    ]
    bodies = worst_bodies(DEFAULT_SETTINGS.max_body_bytes, DEFAULT_SETTINGS.max_json_depth)
    print(f"stranger flood on POST /v1/verify, {args.flood_seconds:.0f} s per phase:")
    # The server in its own process, so the clients here do not share its GIL.
    flood_url, stop = start_process(lambda: create_app(Verifier(fmt_only), tokens={TOKEN: "bench"}))
    try:
        stranger = run_flood(flood_url, "/v1/verify", bodies, probes, args.flood_seconds)
    finally:
        stop()
    out = ROOT / "benchmarks" / "results" / "verify_serve_load.json"
    result = {"by_turns": rows, "flood_100k": refusal, "stranger_flood": stranger}
    write_results(out, result)
    print_tables(tables(result))
    print(f"wrote {out}")


def tables(result: dict) -> list[Table]:
    """Health-check latency while one large request is verified, then the stranger flood."""
    table = Table(["turns", "status", "request s", "health p50 ms", "health max ms"])
    for turns, row in result["by_turns"].items():
        table.add(int(turns), row["status"], row["request_s"], row["health_p50_ms"],
                  row["health_max_ms"])  # fmt: skip
    refusal = result["flood_100k"]
    table.notes.append(
        f"100,000 empty turns: HTTP {refusal['status']} in {refusal['seconds']:.2f} s"
    )
    return [table, flood_table(result["stranger_flood"])]


if __name__ == "__main__":
    main()
