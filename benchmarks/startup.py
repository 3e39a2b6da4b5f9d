"""Start-up time of the command line: ``docket --help``, ``docket --version``, imports.

Each command runs in a fresh process ``--runs`` times (after one warm-up run, so the
files are in the page cache); the table gives the median and the best wall time, and the
CPU time (user + system) of the child, which load on the machine inflates less than
wall time. ``python -X importtime -c "import docket.cli.main"`` then gives the modules
with the largest cumulative import time.

Target (issue 19): ``docket --help`` and ``docket --version`` <= 0.3 s on a quiet machine.

Usage:
    .venv/bin/python benchmarks/startup.py [--runs 10]

Prints a table and writes benchmarks/results/startup.json.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from _table import Table, print_tables, write_results

RESULTS = Path(__file__).resolve().parent / "results" / "startup.json"
COMMANDS = {
    "docket --help": ["-m", "docket", "--help"],
    "docket --version": ["-m", "docket", "--version"],
    "import docket.cli.main": ["-c", "import docket.cli.main"],
    "python (no import)": ["-c", "pass"],
}


def _run(args: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of one child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(args: list[str], runs: int) -> dict[str, float]:
    """Median and best wall time, median CPU time, over ``runs`` fresh processes."""
    _run(args)  # warm-up: page cache, .pyc files
    samples = [_run(args) for _ in range(runs)]
    walls, cpus = [w for w, _ in samples], [c for _, c in samples]
    return {
        "median_s": round(statistics.median(walls), 3),
        "best_s": round(min(walls), 3),
        "cpu_median_s": round(statistics.median(cpus), 3),
    }


def top_imports(count: int = 12) -> list[tuple[str, float]]:
    """The modules with the largest cumulative import time (``-X importtime``), seconds."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import docket.cli.main"],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    rows = []
    for line in done.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((parts[2].strip(), int(parts[1]) / 1e6))
    return sorted(rows, key=lambda row: -row[1])[:count]


def main() -> None:
    """Measure, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    results = {name: measure(args, runs) for name, args in COMMANDS.items()}
    load = os.getloadavg()[0]
    result = {
        "runs": runs, "machine": platform.machine(), "cpus": os.cpu_count(),
        "load_average_1min": round(load, 2), "python": platform.python_version(),
        "commands": results, "top_imports": [{"module": m, "seconds": s} for m, s in top_imports()],
    }  # fmt: skip
    write_results(RESULTS, result)
    print_tables(tables(result))
    print(f"wrote {RESULTS}")


def tables(result: dict) -> list[Table]:
    """Seconds per command, then the largest imports."""
    commands = Table(["command", "median s", "best s", "CPU s"], notes=[
        f"load average {result['load_average_1min']:.2f} on {result['cpus']} CPUs, "
        f"{result['runs']} runs each"])  # fmt: skip
    for name, row in result["commands"].items():
        commands.add(name, row["median_s"], row["best_s"], row["cpu_median_s"])
    imports = Table(
        ["module", "cumulative s"],
        title="largest cumulative imports of `import docket.cli.main` (-X importtime)",
    )
    for row in result["top_imports"]:
        imports.add(row["module"], row["seconds"])
    return [commands, imports]


if __name__ == "__main__":
    main()
