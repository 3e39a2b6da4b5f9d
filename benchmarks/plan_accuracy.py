"""How close a plan comes to the bill: plan, pilot and caps against actual runs.

The mock server of ``judge_throughput.py`` (an asyncio server in a process of its own, so
it keeps its latency at 64 calls in flight and shares no GIL with docket), scripted:
it answers chat calls after a fixed latency with labels that depend on the pair, the
agent and the round (so some debates agree in round 1 and some run on), and answers
``POST /tokenize`` with the same count it reports in each reply's usage (characters / 4),
as llama.cpp and vLLM do. For each data set and method it measures:

- plan without a pilot against the actual run: calls, tokens, cost (prices given);
- plan after ``--pilot 20`` against the actual run of the remaining pairs: calls, tokens,
  wall time (the whole ``run_job`` call; 0.02 s a call, 8 in flight);
- cap overshoot: ``--max-calls`` at half the actual calls, with 20 % of the attempts
  failing (HTTP 500, retried): attempts the server saw beyond the cap;
- wall time on 200 pairs (``--latency`` given as the server's time per call): the plan
  and the projection of ``--pilot 20`` against the run (the whole ``run_job`` call, as a
  caller waits for it), with the server answering after 0.2 s with 64 calls in flight,
  with docket's defaults (nothing known: the limit ramps from 8), and as a 1-slot server
  (one call at a time, the others queue; it reports ``total_slots`` at ``/props`` as
  llama.cpp's server does). Each row keeps the server's own time per call (percentiles):
  what the server did, beside what docket measured.

    python benchmarks/plan_accuracy.py            # both data sets, four methods
    python benchmarks/plan_accuracy.py --quick    # dl21 only

Prints a table and writes benchmarks/results/plan_accuracy.json.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from _table import Table, print_tables, write_results
from judge_throughput import MockServer  # a sibling script: the mock server, scripted

from docket.jobs import Caps, JobSpec, PlanInputs, plan_job, run_job, run_pilot
from docket.llm.usage import Price

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "plan_accuracy.json"
DATA = {
    "dl21": ROOT.parent / "shared" / "data" / "trec_dl21_dev.jsonl",
    "dl20": ROOT.parent / "shared" / "data" / "dl20" / "trec_dl20_pairs.jsonl",
}
METHODS = {"single": {}, "majority": {"samples": 3}, "dream": {"rounds": 2}, "lara": {}}
PRICE = Price(0.15, 0.075, 0.60)
LATENCY_S = 0.02


def _err(planned: float, actual: float) -> float | None:
    return None if not actual else round(100 * (planned - actual) / actual, 1)


def measure(data: str, method: str, server: MockServer, work: Path) -> dict[str, Any]:
    """Plan, run, pilot and cap one method on one data set."""
    model = server.model(8)
    pairs = DATA[data]
    inputs = PlanInputs(prices={"input": PRICE.input, "cached_input": PRICE.cached_input,
                                "output": PRICE.output}, latency_s=LATENCY_S)  # fmt: skip
    shared = dict(model=model, db=str(work / f"{data}-{method}.db"), cache="off",
                  **METHODS[method])  # fmt: skip
    spec = JobSpec.of(method, plan_inputs=inputs, **shared)
    plan = plan_job(pairs, spec, job="plain")
    server.fail_every(0)
    run = run_job(pairs, spec, job="plain")
    u = run.usage
    cost = PRICE.cost(u.prompt_tokens, u.cached_prompt_tokens, u.completion_tokens)
    priced = JobSpec.of(method, price=PRICE, **shared)
    report = run_pilot(pairs, priced, 20, job="pilot")
    piloted, piloted_s = _timed(lambda: run_job(pairs, priced, job="pilot"))
    main = piloted.usage
    cap = max(1, u.calls // 2)
    server.fail_every(5)
    before = server.stats()["calls"]
    capped = run_job(pairs, JobSpec.of(method, caps=Caps(calls=cap), **shared), job="cap")
    attempts = server.stats()["calls"] - before
    server.fail_every(0)
    return {
        "data": data, "method": method, "pairs": plan.todo, "token_source": plan.token_source,
        "plan_calls": plan.calls.expected, "calls": u.calls,
        "plan_calls_err": _err(plan.calls.expected, u.calls),
        "plan_tokens_err": _err(plan.tokens.expected, u.tokens),
        "plan_cost_err": _err(plan.cost.expected, cost),
        "pilot_calls_err": _err(report.projected["calls"].expected, main.calls),
        "pilot_tokens_err": _err(report.projected["prompt_tokens"].expected
                                 + report.projected["completion_tokens"].expected, main.tokens),
        "pilot_wall_err": _err(report.projected["wall_s"].expected, piloted_s),
        "cap": cap, "cap_attempts": attempts, "cap_overshoot": attempts - cap,
        "cap_stopped": bool(capped.stopped_by),
    }  # fmt: skip


WALL_PAIRS = 200
WALL = {  # scenario: (server latency, slots, max_in_flight, methods)
    "0.2 s, 64 in flight": (0.2, 0, 64, ("single", "dream")),
    "0.2 s, defaults (ramp from 8)": (0.2, 0, None, ("single",)),
    "1-slot server, 0.2 s": (0.2, 1, None, ("single", "dream")),
}


def measure_wall(scenario: str, method: str, work: Path) -> dict[str, Any]:
    """The plan's and the pilot's wall time against the runs, on the 200 pairs of dl20.

    Each run is timed as its caller waits for it (the whole ``run_job`` call). The calls-in-
    flight limits docket keeps between runs live in a fresh directory per scenario, so the
    first run starts from nothing known and the pilot's main run where the pilot left it.
    """
    latency, slots, in_flight, _ = WALL[scenario]
    folder = work / f"wall-{slots}-{in_flight}-{method}"
    folder.mkdir()
    os.environ["DOCKET_CACHE"] = str(folder / "cache.db")
    server = MockServer(latency, slots=slots, scripted=True)
    try:
        shared = dict(model=server.model(in_flight), db=str(folder / "jobs.db"),
                      cache="off", limit=WALL_PAIRS, **METHODS[method])  # fmt: skip
        spec = JobSpec.of(method, plan_inputs=PlanInputs(latency_s=latency), **shared)
        plan = plan_job(DATA["dl20"], spec, job="plain")
        server.reset()
        run, run_s = _timed(lambda: run_job(DATA["dl20"], spec, job="plain"))
        served = server.stats()
        report = run_pilot(DATA["dl20"], spec, 20, job="pilot")
        main, main_s = _timed(lambda: run_job(DATA["dl20"], spec, job="pilot"))
    finally:
        server.stop()
    planned, projected = plan.wall_s.expected, report.projected["wall_s"].expected
    return {
        "scenario": scenario, "method": method, "pairs": plan.todo, "calls": run.usage.calls,
        "plan_wall_s": round(planned, 2), "wall_s": round(run_s, 2),
        "plan_wall_err": _err(planned, run_s),
        "pilot_wall_s": round(projected, 2), "main_wall_s": round(main_s, 2),
        "pilot_wall_err": _err(projected, main_s), "pilot_latency_s": round(report.latency_s, 4),
        "server_peak_in_flight": served["peak"], "server_reply_s": served["reply_s"],
        "server_span_s": round(served["last_at"] - served["first_at"], 2),
    }  # fmt: skip


def _timed(call: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started


def main() -> None:
    """Run every data set and method; print the table and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="dl21 only")
    parser.add_argument("--wall-only", action="store_true", help="only the wall-time rows")
    args = parser.parse_args()
    rows, walls, load_before = [], [], os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        for scenario, (*_, methods) in WALL.items():
            for method in methods:
                walls.append(measure_wall(scenario, method, Path(tmp)))
                print(json.dumps(walls[-1]), flush=True)
        if not args.wall_only:
            rows = _bill_rows(["dl21"] if args.quick else list(DATA), Path(tmp))
    if args.wall_only and RESULTS.exists():  # keep the other rows of the last full run
        rows = json.loads(RESULTS.read_text())["rows"]
    # A shared machine slows the server's answers and docket alike: the context of the rows.
    result = {"latency_s": LATENCY_S, "rows": rows, "wall": walls, "load_before": load_before,
              "load": os.getloadavg()[0]}  # fmt: skip
    write_results(RESULTS, result)
    print_tables(tables(result))
    print(f"written {RESULTS}")


def _bill_rows(datasets: list[str], work: Path) -> list[dict[str, Any]]:
    server = MockServer(LATENCY_S, scripted=True)
    rows = []
    try:
        for data in datasets:
            for method in METHODS:
                rows.append(measure(data, method, server, work))
                print(json.dumps(rows[-1]), flush=True)
    finally:
        server.stop()
    return rows


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:+.0f} %"


def _row(table: Table, row: dict[str, Any]) -> None:
    cap = (
        f"{row['cap_attempts']} of {row['cap']}, {row['cap_overshoot']:+d}"
        if "cap" in row
        else None
    )
    table.add(row["data"], row["method"], row["pairs"], row["calls"],
              f"{_pct(row['plan_calls_err'])} / {_pct(row['plan_tokens_err'])} / {_pct(row['plan_cost_err'])}",
              f"{_pct(row['pilot_calls_err'])} / {_pct(row['pilot_tokens_err'])} / {_pct(row['pilot_wall_err'])}",
              cap)  # fmt: skip


def _empty() -> Table:
    return Table(["data", "method", "pairs", "calls", "plan calls / tokens / cost error",
                  "pilot 20 calls / tokens / wall error", "cap (20 % faults): attempts, overshoot"])  # fmt: skip


def tables(result: dict) -> list[Table]:
    """One line per data set and method: the plan's and the pilot's errors, the cap."""
    table = _empty()
    for row in result["rows"]:
        _row(table, row)
    wall = Table(["server", "method", "pairs", "calls", "plan wall s", "run wall s",
                  "plan error", "pilot 20 projects s", "main run s", "pilot error",
                  "server's s a call p50 / p99", "peak in flight"],
                 title=f"wall time on {WALL_PAIRS} pairs (target ±25 %)")  # fmt: skip
    for w in result.get("wall", []):
        served = w.get("server_reply_s") or {}
        latency = f"{served['p50']:.3f} / {served['p99']:.3f}" if served else "-"
        wall.add(w["scenario"], w["method"], w["pairs"], w["calls"], w["plan_wall_s"],
                 w["wall_s"], _pct(w["plan_wall_err"]), w["pilot_wall_s"], w["main_wall_s"],
                 _pct(w["pilot_wall_err"]), latency, w.get("server_peak_in_flight", "-"))  # fmt: skip
    return [table, wall]


if __name__ == "__main__":
    main()
