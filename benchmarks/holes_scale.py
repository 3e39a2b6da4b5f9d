"""Hole filling at BRIDGE scale: a generated pool of 116,000 pairs over 3,600 queries.

Eight generated runs rank 32 of each query's documents (115,200 pooled pairs); every pair
has a generated gold grade, and the oracle judge (the gold label, no LLM) fills them all,
once in one job (``holes fill`` without a budget) and once in the bandit order with a
budget of the whole pool (``holes fill --budget``), each in its own process so the peak
memory is that mode's. It prints pairs per second, peak memory, the time to the first
judged pair and, for the budgeted fill, the overhead per batch (its time beyond the
unbudgeted fill, divided by its batches). Targets (issue 27): at least 1,000 pairs/s,
under 1 GB, under 50 ms per batch.

Usage:
    .venv/bin/python benchmarks/holes_scale.py [--queries 3600] [--batch 200]

Writes benchmarks/results/holes_scale.json.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _table import Table, dict_table, print_tables, write_results

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
RUNS, PER_QUERY, DEPTH = 8, 32, 20


def generate(queries: int, seed: int = 0):  # type: ignore[no-untyped-def]
    """Runs and gold qrels: each query's 32 documents, 8 runs of depth 20 over them."""
    from docket.ir.formats import Run

    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    rankings: list[dict[str, list[str]]] = [{} for _ in range(RUNS)]
    for q in range(queries):
        qid, docs = f"q{q}", [f"q{q}d{d}" for d in range(PER_QUERY)]
        qrels[qid] = {d: (rng.random() < 0.2) * rng.choice((1, 2, 3)) for d in docs}
        for r in range(RUNS):  # run r covers a window of the documents, shuffled
            window = docs[(r * 4) % PER_QUERY :] + docs[: (r * 4) % PER_QUERY]
            top = window[:DEPTH]
            rng.shuffle(top)
            rankings[r][qid] = top
    return [Run(f"run{r}", ranking) for r, ranking in enumerate(rankings)], qrels


def child(mode: str, queries: int, batch: int, db: str) -> dict:
    """One fill in this process: its time, first-pair time, pairs and batches."""
    from docket.holes import HoleOrder, OracleJudge, judge_in_order
    from docket.holes.oracle import oracle_spec
    from docket.jobs import JobSpec, run_job
    from docket.relevance.types import Pair

    runs, qrels = generate(queries)
    pairs = {(q, d): Pair(q, "", d, "", int(g >= 1), g) for q, docs in qrels.items()
             for d, g in docs.items()}  # fmt: skip
    pooled = {(q, d) for run in runs for q, docs in run.ranking.items() for d in docs}
    pairs = {k: p for k, p in pairs.items() if k in pooled}
    spec = oracle_spec(JobSpec.of(db=db))
    first: list[float] = []
    started, cpu = time.perf_counter(), time.process_time()

    def seen(done: int, _total: int) -> None:
        if done and not first:
            first.append(time.perf_counter() - started)

    batches = 0
    if mode == "budgeted":
        order = HoleOrder(pairs, runs, {}, order="bandit")
        run = judge_in_order(pairs, order, len(pairs), spec, job="scale", source="generated",
                             batch=batch, judge=OracleJudge(), on_progress=seen).run  # fmt: skip
        batches = -(-len(pairs) // min(batch, queries))  # a batch draws once per query at most
    else:
        run = run_job(list(pairs.values()), spec, job="scale", judge=OracleJudge(),
                      on_progress=seen)  # fmt: skip
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    judged = run.outcome.judged
    return {"mode": mode, "pairs": len(pairs), "judged": judged, "seconds": elapsed,
            "cpu_seconds": cpu,
            "first_pair_s": first[0] if first else None, "batches": batches}  # fmt: skip


def measure(mode: str, queries: int, batch: int) -> dict:
    """Run one mode in a fresh process; add its peak memory."""
    with tempfile.TemporaryDirectory() as tmp:
        code = (f"import json, sys; sys.path.insert(0, {str(ROOT / 'benchmarks')!r}); "
                f"import holes_scale as h; print(json.dumps(h.child({mode!r}, {queries}, "
                f"{batch}, {str(Path(tmp) / 'scale.db')!r})))")  # fmt: skip
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True)  # fmt: skip
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    row = json.loads(out.stdout.strip().splitlines()[-1])
    row["peak_mb"] = max(peak, before) / 1024
    row["pairs_per_s"] = row["judged"] / row["seconds"] if row["seconds"] else None
    return row


COLUMNS = [
    "mode",
    "pairs",
    "judged",
    "seconds",
    "cpu_seconds",
    "pairs_per_s",
    "first_pair_s",
    "peak_mb",
    "ms_per_batch_over_unbudgeted",
    "cpu_ms_per_batch_over_unbudgeted",
]


def tables(result: dict) -> list[Table]:
    """One row per mode; the targets as notes."""
    table = dict_table(
        result["rows"],
        COLUMNS,
        f"{result['queries']} queries, batch {result['batch']}, oracle judge",
    )
    for row in result["rows"]:
        cpu_rate = row["judged"] / row["cpu_seconds"] if row["cpu_seconds"] else 0
        table.notes.append(
            f"{row['mode']}: {row['pairs_per_s']:.0f} pairs/s of wall time, {cpu_rate:.0f} per "
            f"CPU second (target 1,000); peak {row['peak_mb']:.0f} MB (target < 1,024)"
        )
    return [table]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=3600)
    parser.add_argument("--batch", type=int, default=200)
    args = parser.parse_args()
    rows = [measure(mode, args.queries, args.batch) for mode in ("unbudgeted", "budgeted")]
    plain, ordered = rows
    for key, name in (("seconds", "ms_per_batch_over_unbudgeted"),
                      ("cpu_seconds", "cpu_ms_per_batch_over_unbudgeted")):  # fmt: skip
        ordered[name] = 1000 * (ordered[key] - plain[key]) / ordered["batches"]
    result = {"queries": args.queries, "batch": args.batch, "rows": rows}
    write_results(RESULTS / "holes_scale.json", result)
    print_tables(tables(result))


if __name__ == "__main__":
    main()
