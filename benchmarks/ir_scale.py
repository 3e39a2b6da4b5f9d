"""Speed of the pure-computation IR steps at benchmark scale.

Builds synthetic qrels and runs (550 queries x 25 runs x depth 100 by default), writes
them as TREC files, then times each step: loading, pooling + hole listing, Hole@k
counting, re-evaluation with ir_measures (original, completed and condensed variants),
ranking comparison, composing completed qrels, per-query scores and paired significance
tests between all systems. Optionally indexes a synthetic corpus in
a child process and reports its build rate and peak memory.

Usage:
    .venv/bin/python benchmarks/ir_scale.py [--queries 550] [--runs 25] [--depth 100]
        [--corpus-docs 200000]

Prints a table and writes benchmarks/results/ir_scale.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _table import Table, print_tables, write_results

from docket.ir import (
    compare_rankings,
    compare_systems,
    compose_qrels,
    find_holes,
    hole_rate,
    read_qrels,
    read_runs,
)
from docket.ir.corpus import CorpusIndex, iter_corpus_file
from docket.ir.evaluate import parse_measures
from docket.ir.per_query import per_query_variants
from docket.ir.provenance import ProvenanceRecord
from docket.ir.significance import compare_pairs

RESULTS = Path(__file__).parent / "results" / "ir_scale.json"
CANDIDATES = 1_000  # documents per query a system may retrieve


def write_synthetic(
    folder: Path, queries: int, runs: int, depth: int, seed: int = 0
) -> tuple[Path, list[Path]]:
    """Qrels judging the top-10 of five runs (plus random extras), and ``runs`` run files."""
    rng = np.random.default_rng(seed)
    quality = rng.uniform(0.2, 1.0, size=runs)  # how strongly each system prefers good docs
    merit = rng.gamma(0.5, size=(queries, CANDIDATES))  # latent relevance of each doc
    rankings = []
    for s in range(runs):
        noise = rng.gumbel(size=(queries, CANDIDATES)) / quality[s]
        rankings.append(np.argsort(-(np.log(merit + 1e-9) + noise), axis=1)[:, :depth])
    run_paths = []
    for s, ranking in enumerate(rankings):
        path = folder / f"sys{s:02d}.trec"
        with path.open("w") as handle:
            for q in range(queries):
                handle.writelines(
                    f"q{q} Q0 q{q}d{d} {r + 1} {depth - r}.5 sys{s:02d}\n"
                    for r, d in enumerate(ranking[q])
                )
        run_paths.append(path)
    qrels_path = folder / "qrels.txt"
    with qrels_path.open("w") as handle:
        for q in range(queries):
            judged = {int(d) for s in range(5) for d in rankings[s][q, :10]}
            judged |= {int(d) for d in rng.choice(CANDIDATES, size=10, replace=False)}
            for d in sorted(judged):
                grade = int(np.digitize(merit[q, d], [0.5, 1.0, 2.0]))
                handle.write(f"q{q} 0 q{q}d{d} {grade}\n")
    return qrels_path, run_paths


def timed(name: str, timings: dict, fn, *args, **kwargs):
    """Run ``fn`` and record its wall time and CPU time under ``name``.

    CPU time is reported too because the machine may be shared: under contention the
    wall time grows while the CPU time stays close to the work done.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(*args, **kwargs)
    timings[name] = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu}
    return result


def ir_steps(folder: Path, queries: int, runs: int, depth: int) -> dict:
    """Generate the data, then time every step; returns timings and sizes."""
    timings: dict[str, float] = {}
    qrels_path, run_paths = timed(
        "generate + write files (not docket)",
        timings,
        write_synthetic,
        folder,
        queries,
        runs,
        depth,
    )
    qrels, systems = timed(
        "load qrels + runs", timings, lambda: (read_qrels(qrels_path), read_runs(run_paths))
    )
    report = timed("pool@10 + list holes + Hole@10", timings, find_holes, qrels, systems, 10)
    timed("Hole@100 for all runs", timings, lambda: [hole_rate(qrels, r, 100) for r in systems])
    rng = np.random.default_rng(1)
    fills = [
        ProvenanceRecord(qid=q, docid=d, relevance=int(x), label=int(x), source="consensus")
        for (q, d), x in zip(report.hole_keys, rng.integers(0, 2, len(report.holes)), strict=True)
    ]
    completed = timed("compose completed qrels", timings, compose_qrels, qrels, fills, "automatic")
    systems_report = timed(
        "re-evaluate (ir_measures, 4 variants x 5 measures)",
        timings,
        compare_systems,
        systems,
        qrels,
        completed,
    )
    timed(
        "ranking comparison (tau, tau_AP, shifts)",
        timings,
        compare_rankings,
        "completed",
        systems_report.scores["original"],
        systems_report.scores["completed"],
        systems_report.primary,
    )
    _significance_steps(timings, systems, qrels, completed, systems_report)
    judged = sum(len(d) for d in qrels.values())
    return {
        "timings": timings,
        "sizes": {
            "queries": queries,
            "runs": runs,
            "depth": depth,
            "run_lines": queries * runs * depth,
            "judged_pairs": judged,
            "pool@10": report.pool_size,
            "holes@10": len(report.holes),
        },
        "comparison": next(
            c.model_dump() for c in systems_report.comparisons if c.variant == "completed"
        ),
    }


def _significance_steps(timings: dict, systems, qrels, completed, report) -> None:
    """Per-query scores of the two qrels, then both paired tests over every system pair."""
    variants = {"original": (qrels, False), "completed": (completed, False)}
    measures = parse_measures(report.measures)
    table = timed(
        "per-query scores (2 variants x 5 measures)",
        timings,
        per_query_variants,
        variants,
        systems,
        measures,
    )
    pairs = len(systems) * (len(systems) - 1) // 2
    timed(
        f"significance, {pairs} pairs x 2 variants (t + 10k randomization)",
        timings,
        lambda: [
            compare_pairs({s: m[report.primary] for s, m in table[v].items()}, v, report.primary)
            for v in variants
        ],
    )


def peak_rss_mb() -> float:
    """Peak resident memory of this process (VmHWM; ru_maxrss would include the parent's)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def corpus_step(folder: Path, docs: int) -> dict:
    """Write a JSONL corpus and index it (run in a child process to measure its peak memory)."""
    path = folder / "corpus.jsonl"
    rng = np.random.default_rng(2)
    words = np.array(["zebra", "stripe", "grass", "savanna", "herd", "river", "migration", "lion"])
    with path.open("w") as handle:
        for i in range(docs):
            text = " ".join(rng.choice(words, size=50))
            handle.write(json.dumps({"_id": f"doc{i}", "title": f"T{i}", "text": text}) + "\n")
    before = peak_rss_mb()
    start = time.perf_counter()
    index = CorpusIndex.build(iter_corpus_file(path), folder / "corpus.sqlite", source="bench")
    elapsed = time.perf_counter() - start
    lookup_start = time.perf_counter()
    found = index.get_many(f"doc{i}" for i in rng.integers(0, docs, 10_000))
    lookup = time.perf_counter() - lookup_start
    peak = peak_rss_mb()
    return {
        "docs": docs,
        "file_mb": path.stat().st_size / 2**20,
        "build_s": elapsed,
        "docs_per_s": docs / elapsed,
        "lookup_10k_s": lookup,
        "found": len(found),
        "peak_rss_mb": peak,
        "rss_before_build_mb": before,
        "extrapolated_9M_build_min": 9e6 / (docs / elapsed) / 60,
    }


def tables(result: dict) -> list[Table]:
    """The timings per step; the corpus index as a note."""
    sizes = result["ir"]["sizes"]
    table = Table(["step", "wall s", "cpu s"], title=(
        f"IR scale: {sizes['queries']} queries x {sizes['runs']} runs x depth {sizes['depth']} "
        f"({sizes['run_lines']:,} run lines, {sizes['judged_pairs']:,} judgments, "
        f"{sizes['holes@10']:,} holes@10)"))  # fmt: skip
    for name, t in result["ir"]["timings"].items():
        table.add(name, t["wall_s"], t["cpu_s"])
    steps = [t for k, t in result["ir"]["timings"].items() if "not docket" not in k]
    table.add("total (docket steps)", sum(t["wall_s"] for t in steps),
              sum(t["cpu_s"] for t in steps))  # fmt: skip
    if corpus := result.get("corpus"):
        table.notes.append(
            f"corpus index: {corpus['docs']:,} docs ({corpus['file_mb']:.0f} MB) in "
            f"{corpus['build_s']:.1f} s = {corpus['docs_per_s']:,.0f} docs/s; peak RSS "
            f"{corpus['peak_rss_mb']:.0f} MB; 10k lookups {corpus['lookup_10k_s']:.2f} s; "
            f"9M docs ~ {corpus['extrapolated_9M_build_min']:.0f} min"
        )
    return [table]


def main() -> None:
    """Parse arguments, run the steps, print and save the results."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=550)
    parser.add_argument("--runs", type=int, default=25)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--corpus-docs", type=int, default=200_000)
    parser.add_argument("--corpus-only", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.corpus_only:
        print(json.dumps(corpus_step(args.corpus_only, args.corpus_docs)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        result = {
            "python": platform.python_version(),
            "machine": platform.machine(),
            "ir": ir_steps(Path(tmp), args.queries, args.runs, args.depth),
        }
        if args.corpus_docs:
            child = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--corpus-only",
                    tmp,
                    "--corpus-docs",
                    str(args.corpus_docs),
                ],
                check=True,
                capture_output=True,
                text=True,
            )
            result["corpus"] = json.loads(child.stdout)
    write_results(RESULTS, result)
    print_tables(tables(result))
    print(f"\nwritten to {RESULTS}")


if __name__ == "__main__":
    main()
