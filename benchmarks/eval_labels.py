"""``docket eval labels`` on the 33 released LLMJudge label files: time, peak memory, figures.

Runs the real command (a fresh process each time, imports included, as a user runs it)
over the human qrels and all 33 submissions with ``--clip 0:3``: once as it prints JSON,
once drawing the 33-panel confusion grid too. Wall time is the median of ``--repeat``
runs; peak memory is the child's maximum resident set size (``wait4``). The library call
alone (reading, joining and scoring, no imports) is timed in this process as well.

Targets (issue 18): under 10 s and under 300 MB on the project machine (2 cores).

Usage:
    .venv/bin/python benchmarks/eval_labels.py [--repeat 3] [--data ../shared/data/llmjudge]

Prints a timing table and one row of kappa figures per file, and writes
benchmarks/results/eval_labels.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _table import Table, print_tables, write_results

from docket.ir.label_agreement import evaluate_labels
from docket.ir.label_files import parse_scale

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "eval_labels.json"
DOCKET = Path(sys.executable).with_name("docket")
TARGET_SECONDS, TARGET_MB = 10.0, 300.0


def run_command(args: list[str]) -> tuple[float, float, str]:
    """Run docket once: wall seconds, peak RSS of the child in MB, its stdout."""
    with tempfile.TemporaryFile() as stdout:
        start = time.perf_counter()
        child = subprocess.Popen([str(DOCKET), *args], stdout=stdout, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            raise SystemExit(f"docket {' '.join(args)} exited {child.returncode}")
        stdout.seek(0)
        return seconds, usage.ru_maxrss / 1024, stdout.read().decode()


def measure(name: str, args: list[str], repeat: int) -> tuple[dict, str]:
    """Median seconds and the largest peak RSS over ``repeat`` runs of one command line."""
    runs = [run_command(args) for _ in range(repeat)]
    row = {
        "case": name,
        "seconds": statistics.median(r[0] for r in runs),
        "peak_mb": max(r[1] for r in runs),
        "runs": repeat,
    }
    row["within_target"] = row["seconds"] < TARGET_SECONDS and row["peak_mb"] < TARGET_MB
    return row, runs[-1][2]


def library_seconds(gold: Path, files: list[Path], repeat: int) -> float:
    """Median seconds of :func:`evaluate_labels` in this process (imports already done)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        evaluate_labels(gold, files, parse_scale("0:3", clip=True))
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def tables(result: dict) -> list[Table]:
    """Time and memory per case against the targets, then the figures per label file."""
    targets = result["targets"]
    cases = Table(["case", "seconds", "peak MB", "verdict"], notes=[
        f"targets: under {targets['seconds']:.0f} s and {targets['peak_mb']:.0f} MB; "
        f"{result['files']} files, {result['pairs']} gold pairs"])  # fmt: skip
    for row in result["cases"]:
        cases.add(row["case"], row["seconds"], row["peak_mb"],
                  "met" if row["within_target"] else "MISSED")  # fmt: skip
    cases.add("library call only (no imports)", result["library_seconds"], None, "")
    figures = Table(["label file", "kappa", ">=1", ">=2", ">=3", "alpha ord", "clipped"])
    for r in result["figures"]:
        figures.add(r["file"], r["kappa"], *(r["binary_kappa"][str(t)] for t in (1, 2, 3)),
                    r["alpha_ordinal"], r["clipped"])  # fmt: skip
    return [cases, figures]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "llmjudge")
    options = parser.parse_args()
    gold, files = (
        options.data / "human_qrels.txt",
        sorted((options.data / "submissions").glob("*.txt")),
    )
    base = ["eval", "labels", str(gold), *map(str, files), "--clip", "0:3"]
    with tempfile.TemporaryDirectory() as folder:
        json_row, stdout = measure(
            f"{len(files)} files, --format json", [*base, "--format", "json"], options.repeat
        )
        plot = str(Path(folder) / "grid.png")
        plot_row, _ = measure(
            f"{len(files)} files, json + --plot grid",
            [*base, "--format", "json", "--plot", plot],
            options.repeat,
        )
    results = json.loads(stdout)["results"]
    library = library_seconds(gold, files, options.repeat)
    result = {
        "files": len(files),
        "pairs": results[0]["gold_pairs"],
        "cases": [json_row, plot_row],
        "library_seconds": library,
        "targets": {"seconds": TARGET_SECONDS, "peak_mb": TARGET_MB},
        "figures": [
            {"file": r["name"], "kappa": r["kappa"], "binary_kappa": r["binary_kappa"],
             "alpha_ordinal": r["alpha_ordinal"], "clipped": r["clipped"]}
            for r in results
        ],
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }  # fmt: skip
    write_results(RESULTS, result)
    print_tables(tables(result))
    print(f"\nwritten to {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
