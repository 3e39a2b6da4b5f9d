"""Latency of RE-AD verification against a local OpenAI-compatible mock server.

Starts ``benchmarks/mock_openai_server.py`` in a child process on a free loopback port
with simulated latencies (small model 0.3 s, large model 1.5 s per call) and verifies the
20-rule example set (``examples/sop/rules.yaml``: 8 fmt, 5 sim, 7 sub) through the real
HTTP client path. Measured:

- the slowest single call (large model alone), the reference for the target;
- atomic mode (one call per LLM rule, all concurrent) on the whole record (all 20 rules)
  and on a new assistant turn (incremental: 18 applicable rules);
- holistic mode (all rules in one large-model call);
- fmt-only verification (the 8 fmt rules, no model);
- the incremental replay of a dialogue turn by turn (LLM calls per turn with the cache).

Targets (issue 5): atomic p95 <= 1.1 x the slowest single call; fmt-only under 5 ms.

Usage:
    .venv/bin/python benchmarks/adherence_latency.py [--runs 20] [--small 0.3] [--large 1.5]

Prints a table and writes benchmarks/results/adherence_latency.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from _table import Table, print_tables, write_results

import docket.llm.openai_compat  # noqa: F401  (registers the openai-compatible provider)
from docket.adherence.record import Record, read_records
from docket.adherence.rules import RuleSet, load_rules
from docket.adherence.verify.verifier import Submission, Verifier, VerifierConfig
from docket.llm import Message, Model, Request, RetryPolicy

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "adherence_latency.json"
RULES = ROOT / "examples" / "sop" / "rules.yaml"
DIALOGUES = ROOT / "examples" / "sop" / "dialogues.jsonl"


def free_port() -> int:
    """A free TCP port on the loopback interface."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_mock(port: int, small: float, large: float) -> subprocess.Popen[bytes]:
    """Start the mock server and wait until it answers."""
    script = ROOT / "benchmarks" / "mock_openai_server.py"
    args = [
        sys.executable,
        str(script),
        "--port",
        str(port),
        "--latency",
        f"small={small}",
        "--latency",
        f"large={large}",
    ]
    process = subprocess.Popen(args)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return process
        except httpx.HTTPError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("the mock server did not start")


def percentiles(values: list[float]) -> dict[str, float]:
    """p50, p95 and max of a sample (nearest-rank p95)."""
    ordered = sorted(values)
    p95 = ordered[max(0, round(0.95 * len(ordered)) - 1)]
    return {"n": len(ordered), "p50": statistics.median(ordered), "p95": p95, "max": ordered[-1]}


def variant(record: Record, i: int) -> Record:
    """A copy with a changed scenario so no response or result cache can answer."""
    fields = {**record.fields, "scenario": f"{record.fields.get('scenario', '')} (variant {i})"}
    return record.model_copy(update={"fields": fields})


async def single_call_latency(model: Model, prompt_chars: int, runs: int) -> list[float]:
    """Seconds per call of one model alone, with a prompt of about the verifier's size."""
    times = []
    for i in range(runs):
        request = Request(
            messages=(Message("user", f"{i} " + "x" * prompt_chars + "\nVERDICT:"),), max_tokens=16
        )
        started = time.perf_counter()
        await model.generate(request)
        times.append(time.perf_counter() - started)
    return times


async def timed(verifier: Verifier, submissions: list[Submission]) -> tuple[list[float], list]:
    """Seconds per submission, verified one after another; also the verdicts."""
    times, verdicts = [], []
    for submission in submissions:
        started = time.perf_counter()
        verdicts.append(await verifier.verify(submission))
        times.append(time.perf_counter() - started)
    return times, verdicts


def own_overhead(verdicts: list) -> dict[str, float]:
    """Submission wall time over the slowest LLM call inside it (the verifier's own overhead)."""
    ratios = []
    for verdict in verdicts:
        slowest = max(r.call.latency_ms for r in verdict.results if r.call is not None)
        ratios.append(verdict.total_ms / slowest)
    return percentiles(ratios)


def prefix_share(verdicts: list) -> dict[str, float]:
    """Share of prompt tokens shared with the previous call (ours) and cached (the server's)."""
    calls = [r.call for v in verdicts for r in v.results if r.call is not None and not r.cached]
    prompt = sum(c.prompt_tokens for c in calls) or 1
    return {
        "calls": len(calls),
        "shared_prefix_share": sum(c.shared_prefix_tokens for c in calls) / prompt,
        "server_cached_share": sum(c.cached_prompt_tokens for c in calls) / prompt,
    }


async def fmt_only(ruleset: RuleSet, record: Record, runs: int) -> dict[str, dict[str, float]]:
    """Milliseconds per fmt-only verification (wall and CPU), whole record and new turn.

    CPU time is reported too because on a shared machine the wall-clock tail mostly
    measures time the process was not scheduled.
    """
    fmt = RuleSet(name="fmt-only", rules=ruleset.by_tier("fmt"))
    verifier = Verifier(fmt)
    out = {}
    for label, submission in (
        ("whole_record", Submission(record)),
        ("new_turn", Submission(record, len(record.turns) - 1)),
    ):
        await verifier.verify(submission)  # warm-up
        wall, cpu = [], []
        for _ in range(runs):
            started, started_cpu = time.perf_counter(), time.process_time()
            await verifier.verify(submission)
            wall.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - started_cpu) * 1000)
        out[label] = {
            **percentiles(wall),
            "cpu_p50": statistics.median(cpu),
            "cpu_p95": percentiles(cpu)["p95"],
        }
    return out


async def incremental_replay(verifier: Verifier, record: Record) -> list[dict[str, int]]:
    """Replay a dialogue turn by turn; LLM calls made per turn (cache on)."""
    rows = []
    for index in range(len(record.turns)):
        grown = record.model_copy(update={"turns": record.turns[: index + 1]})
        verdict = await verifier.verify(Submission(grown, index))
        calls = sum(t.calls for t in verdict.tiers.values())
        rows.append({"turn": index, "rules": len(verdict.results), "llm_calls": calls})
    return rows


def models(port: int) -> tuple[Model, Model]:
    """The small (sim) and large (sub) models on the mock server, no retries, no cache."""
    base = f"openai-compatible:http://127.0.0.1:{port}/v1#"
    retry = RetryPolicy(max_retries=0)
    return Model(base + "small", retry=retry, max_concurrency=32), Model(
        base + "large", retry=retry, max_concurrency=32
    )


async def run(args: argparse.Namespace, port: int) -> dict:
    """All measurements; returns the JSON report."""
    ruleset = load_rules(RULES)
    record = next(r for r in read_records(DIALOGUES) if len(r.turns) >= 4)
    small, large = models(port)
    config = VerifierConfig(cache_size=0, timeout_s=30)
    atomic = Verifier(ruleset, sim_model=small, sub_model=large, config=config)
    holistic = Verifier(
        ruleset, sub_model=large, config=VerifierConfig(mode="holistic", cache_size=0, timeout_s=30)
    )
    prompt_chars = len(atomic.system) + sum(len(t.text) for t in record.turns)
    await single_call_latency(small, prompt_chars, 2)  # warm up connections
    single = await single_call_latency(large, prompt_chars, args.single_runs)
    whole = [Submission(variant(record, i)) for i in range(args.runs)]
    new_turn = [
        Submission(variant(record, 1000 + i), len(record.turns) - 1) for i in range(args.runs)
    ]
    await atomic.verify(Submission(variant(record, -1)))  # warm-up: open the connection pools
    atomic_whole, whole_verdicts = await timed(atomic, whole)
    atomic_turn, turn_verdicts = await timed(atomic, new_turn)
    holistic_whole, _ = await timed(
        holistic, [Submission(variant(record, 2000 + i)) for i in range(args.runs)]
    )
    replay = await incremental_replay(Verifier(ruleset, sim_model=small, sub_model=large), record)
    slowest = statistics.median(single)
    report = {
        "setup": {
            "small_latency_s": args.small,
            "large_latency_s": args.large,
            "runs": args.runs,
            "rules": ruleset.tier_counts(),
            "record": record.id,
            "turns": len(record.turns),
            "python": platform.python_version(),
            "load_average_1min": os.getloadavg()[0],
            "cpus": os.cpu_count(),
            "machine": platform.machine(),
        },
        "slowest_single_call_s": percentiles(single),
        "atomic_whole_record_s": percentiles(atomic_whole),
        "atomic_new_turn_s": percentiles(atomic_turn),
        "holistic_whole_record_s": percentiles(holistic_whole),
        "fmt_only_ms": await fmt_only(ruleset, record, args.fmt_runs),
        "atomic_over_own_slowest_call": own_overhead(whole_verdicts),
        "prefix": {
            "whole_record": prefix_share(whole_verdicts),
            "new_turn": prefix_share(turn_verdicts),
        },
        "incremental_replay": replay,
        "rules_per_submission": {
            "whole_record": len(whole_verdicts[0].results),
            "new_turn": len(turn_verdicts[0].results),
        },
    }
    report["targets"] = {
        "atomic_p95_over_slowest_call": percentiles(atomic_whole)["p95"] / slowest,
        "atomic_p95_ok": percentiles(atomic_whole)["p95"] <= 1.1 * slowest,
        "fmt_only_p95_ok": report["fmt_only_ms"]["whole_record"]["p95"] < 5.0,
    }
    return report


def tables(report: dict) -> list[Table]:
    """Latency percentiles per measurement; targets and context as notes."""
    table = Table(["measurement", "unit", "p50", "p95", "max"])
    for key in ("slowest_single_call_s", "atomic_whole_record_s", "atomic_new_turn_s",
                "holistic_whole_record_s"):  # fmt: skip
        row = report[key]
        table.add(key, "s", row["p50"], row["p95"], row["max"])
    for label, row in report["fmt_only_ms"].items():
        table.add(f"fmt_only_{label} (wall)", "ms", row["p50"], row["p95"], row["max"])
        table.add(f"fmt_only_{label} (CPU)", "ms", row["cpu_p50"], row["cpu_p95"], None)
    targets, own = report["targets"], report["atomic_over_own_slowest_call"]
    prefix, setup = report["prefix"]["whole_record"], report["setup"]
    table.notes += [
        f"atomic p95 / slowest single call = {targets['atomic_p95_over_slowest_call']:.3f} "
        f"(target <= 1.1: {'ok' if targets['atomic_p95_ok'] else 'MISSED'}); "
        f"fmt-only p95 < 5 ms: {'ok' if targets['fmt_only_p95_ok'] else 'MISSED'}",
        f"atomic wall / slowest call inside the same submission: p50 {own['p50']:.3f}, "
        f"p95 {own['p95']:.3f}",
        f"load average (1 min): {setup['load_average_1min']:.1f} on {setup['cpus']} CPUs",
        f"prompt tokens shared with the previous call: {prefix['shared_prefix_share']:.0%}; "
        f"reported cached by the server: {prefix['server_cached_share']:.0%}",
        "incremental replay (LLM calls per turn): "
        + str([row["llm_calls"] for row in report["incremental_replay"]]),
    ]
    return [table]


def main() -> None:
    """Parse options, run the mock server and the measurements, write the JSON."""
    parser = argparse.ArgumentParser(description="RE-AD verification latency against a mock server")
    parser.add_argument("--runs", type=int, default=20, help="submissions per mode")
    parser.add_argument("--single-runs", type=int, default=10, help="single large-model calls")
    parser.add_argument("--fmt-runs", type=int, default=2000, help="fmt-only verifications")
    parser.add_argument("--small", type=float, default=0.3, help="small model latency (s)")
    parser.add_argument("--large", type=float, default=1.5, help="large model latency (s)")
    args = parser.parse_args()
    port = free_port()
    server = start_mock(port, args.small, args.large)
    try:
        report = asyncio.run(run(args, port))
    finally:
        server.terminate()
        server.wait(timeout=10)
    write_results(RESULTS, report)
    print_tables(tables(report))
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
