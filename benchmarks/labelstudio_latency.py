"""Latency of the Label Studio backend's ``/predict``, interactive, through real HTTP.

Starts ``benchmarks/mock_openai_server.py`` (small model 0.3 s, large model 1.5 s per
call) and ``docket verify labelstudio`` as a child process on free loopback ports, then
posts interactive ``/predict`` requests in the shape Label Studio 1.23.2 sends (the task,
the labelling config, ``params.context.result`` holding the annotator's answer) with
Basic auth, one after another:

- the 20-rule example set (``examples/sop/rules.yaml``: 8 fmt, 5 sim, 7 sub): the answer
  is the new assistant turn; each request's answer differs, so no cache can answer;
- the 8 fmt rules alone (no model).

Targets (issue 24): p95 <= 1.1 x the slowest single call (the large model alone);
fmt-only answers <= 50 ms p95.

Usage:
    .venv/bin/python benchmarks/labelstudio_latency.py [--runs 20] [--fmt-runs 200]

Prints a table and writes benchmarks/results/labelstudio_latency.json.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from _table import Table, print_tables, write_results
from adherence_latency import (
    free_port,
    models,
    percentiles,
    single_call_latency,
    start_mock,
)

from docket.adherence.record import Record, read_records
from docket.adherence.rules import RuleSet, dump_rules, load_rules

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "labelstudio_latency.json"
RULES = ROOT / "examples" / "sop" / "rules.yaml"
DIALOGUES = ROOT / "examples" / "sop" / "dialogues.jsonl"
TOKEN = "bench-labelstudio-token-0123456789"
BASIC = {"Authorization": "Basic " + base64.b64encode(f"labelstudio:{TOKEN}".encode()).decode()}
CONFIG = """<View>
  <Text name="scenario" value="$scenario"/>
  <Paragraphs name="chat" value="$dialogue" layout="dialogue" nameKey="author" textKey="text"/>
  <TextArea name="response" toName="chat" rows="3" editable="true"/>
  <TextArea name="docket" toName="chat" editable="false"/>
</View>"""


def start_backend(rules: Path, port: int, mock_port: int, db: Path) -> subprocess.Popen[bytes]:
    """``docket verify labelstudio`` in a child process; wait until it answers."""
    base = f"openai-compatible:http://127.0.0.1:{mock_port}/v1#"
    command = [
        sys.executable, "-m", "docket", "verify", "labelstudio", "--rules", str(rules),
        "--sim-model", base + "small", "--sub-model", base + "large", "--cache", "off",
        "--port", str(port), "--db", str(db), "--timeout", "30",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "DOCKET_VERIFY_TOKEN": f"bench={TOKEN}"}
    process = subprocess.Popen(command, env=env)
    deadline = time.monotonic() + 300  # a loaded 2-core machine imports slowly
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError("docket verify labelstudio did not start")


def predict_body(record: Record, i: int) -> dict[str, Any]:
    """An interactive /predict body: the dialogue before the last turn, the last as the answer."""
    *before, last = record.turns
    dialogue = [{"author": t.role, "text": t.text} for t in before]
    answer = f"{last.text} (Reference {i}.)"
    region = {"id": f"r{i}", "from_name": "response", "to_name": "chat", "type": "textarea"}
    task = {"id": i, "data": {"dialogue": dialogue, "scenario": record.fields.get("scenario", "")}}
    return {
        "tasks": [task],
        "project": "1.1700000000",
        "label_config": CONFIG,
        "params": {"login": None, "password": None,
                   "context": {"result": [{**region, "value": {"text": [answer]}}]}},
    }  # fmt: skip


def post_all(port: int, bodies: list[dict[str, Any]]) -> tuple[list[float], list[dict]]:
    """Seconds per /predict, one request after another; also the answers."""
    times, answers = [], []
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=BASIC, timeout=60) as client:
        client.post("/predict", json=bodies[0])  # warm-up: connections, mapping cache
        for body in bodies:
            started = time.perf_counter()
            answer = client.post("/predict", json=body)
            times.append(time.perf_counter() - started)
            answer.raise_for_status()
            answers.append(answer.json())
    return times, answers


def run(args: argparse.Namespace, mock_port: int, work: Path) -> dict[str, Any]:
    """All measurements; returns the JSON report."""
    ruleset = load_rules(RULES)
    record = next(r for r in read_records(DIALOGUES) if len(r.turns) >= 4)
    fmt_rules = work / "fmt-rules.yaml"
    dump_rules(RuleSet(name="fmt-only", rules=ruleset.by_tier("fmt")), fmt_rules)
    _small, large = models(mock_port)
    single = asyncio.run(single_call_latency(large, 4000, args.single_runs))
    slowest = statistics.median(single)
    measured: dict[str, Any] = {}
    for label, rules, runs in (
        ("all_rules", RULES, args.runs),
        ("fmt_only", fmt_rules, args.fmt_runs),
    ):
        port = free_port()
        backend = start_backend(rules, port, mock_port, work / f"{label}.db")
        try:
            times, answers = post_all(port, [predict_body(record, i) for i in range(runs)])
        finally:
            backend.terminate()
            backend.wait(timeout=30)
        flagged = [len(a["results"][0]["result"]) for a in answers]
        measured[label] = {
            "seconds": percentiles(times),
            "flagged_rules_median": statistics.median(flagged),
        }
    all_p95 = measured["all_rules"]["seconds"]["p95"]
    fmt_p95_ms = measured["fmt_only"]["seconds"]["p95"] * 1000
    return {
        "setup": {
            "small_latency_s": args.small, "large_latency_s": args.large,
            "rules": ruleset.tier_counts(), "record": record.id, "turns": len(record.turns),
            "python": platform.python_version(), "cpus": os.cpu_count(),
            "load_average_1min": os.getloadavg()[0],
        },
        "slowest_single_call_s": percentiles(single),
        "predict_all_rules_s": measured["all_rules"]["seconds"],
        "predict_fmt_only_s": measured["fmt_only"]["seconds"],
        "flagged_rules_median": {k: v["flagged_rules_median"] for k, v in measured.items()},
        "targets": {
            "p95_over_slowest_call": all_p95 / slowest,
            "p95_ok": all_p95 <= 1.1 * slowest,
            "fmt_only_p95_ms": fmt_p95_ms,
            "fmt_only_ok": fmt_p95_ms <= 50.0,
        },
    }  # fmt: skip


def tables(report: dict[str, Any]) -> list[Table]:
    """Latency percentiles of /predict and the slowest single call; targets as notes."""
    table = Table(["measurement", "unit", "n", "p50", "p95", "max"])
    for key in ("slowest_single_call_s", "predict_all_rules_s", "predict_fmt_only_s"):
        row = report[key]
        table.add(key, "s", row["n"], row["p50"], row["p95"], row["max"])
    targets, setup = report["targets"], report["setup"]
    table.notes += [
        f"/predict p95 / slowest call = {targets['p95_over_slowest_call']:.3f} "
        f"(target <= 1.1: {'ok' if targets['p95_ok'] else 'MISSED'}); "
        f"fmt-only p95 = {targets['fmt_only_p95_ms']:.1f} ms "
        f"(target <= 50 ms: {'ok' if targets['fmt_only_ok'] else 'MISSED'})",
        f"flagged rules per answer (median): {report['flagged_rules_median']}",
        f"load average (1 min): {setup['load_average_1min']:.1f} on {setup['cpus']} CPUs",
    ]
    return [table]


def main() -> None:
    """Parse options, start the servers, measure, write the JSON."""
    parser = argparse.ArgumentParser(description="Label Studio backend /predict latency")
    parser.add_argument("--runs", type=int, default=20, help="interactive predictions, 20 rules")
    parser.add_argument("--fmt-runs", type=int, default=200, help="predictions, fmt rules only")
    parser.add_argument("--single-runs", type=int, default=10, help="single large-model calls")
    parser.add_argument("--small", type=float, default=0.3, help="small model latency (s)")
    parser.add_argument("--large", type=float, default=1.5, help="large model latency (s)")
    args = parser.parse_args()
    mock_port = free_port()
    mock = start_mock(mock_port, args.small, args.large)
    try:
        with tempfile.TemporaryDirectory() as work:
            report = run(args, mock_port, Path(work))
    finally:
        mock.terminate()
        mock.wait(timeout=30)
    write_results(RESULTS, report)
    print_tables(tables(report))
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
