"""docket against a server that answers one call at a time (llama.cpp with one slot).

60 single-judge pairs, 0.3 s a call, ``docket judge --timeout 5``, as issue 20 measured:
with 64 calls sent at once, calls queue past the client timeout and are sent again. Each
row is a real ``docket judge`` process (``--src`` picks the source tree, so an older
checkout can be measured beside this one) against a scripted HTTP server on loopback
that serves one request at a time; ``/props`` is offered (``total_slots: 1``, as llama.cpp's
C++ server reports) or not (llama-cpp-python's server, vLLM, Ollama).

    python benchmarks/one_slot_server.py [--src /work/main/src]

Prints a table and writes benchmarks/results/one_slot_server.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from _table import Table, dict_table, print_tables, write_results  # noqa: E402

from tests.scripted_server import Reply, serve  # noqa: E402  (the suite's scripted server)

RESULTS = ROOT / "benchmarks" / "results" / "one_slot_server.json"
REPLY = json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "scripted"})
PAIRS, LATENCY_S, TIMEOUT_S = 60, 0.3, 5


def write_pairs(path: Path) -> None:
    """``PAIRS`` distinct pairs."""
    rows = [{"qid": f"q{i % 6}", "query": "boil an egg", "docid": f"d{i}",
             "text": f"Egg text number {i}. Boil it six minutes."} for i in range(PAIRS)]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def run(src: Path, props: bool, folder: Path, tag: str) -> dict:
    """One ``docket judge`` process against a fresh 1-slot server."""
    pairs, db = folder / "pairs.jsonl", folder / f"{tag}.db"
    write_pairs(pairs)
    gets = {"/props": Reply(200, {"total_slots": 1})} if props else {}
    with serve(lambda _body: REPLY, delay_s=LATENCY_S, gets=gets, slots=1) as server:
        command = [sys.executable, "-m", "docket", "judge", str(pairs), "--method", "single",
                   "--model", server.model(), "--timeout", str(TIMEOUT_S), "--db", str(db),
                   "--job", "bench", "--cache", "off"]  # fmt: skip
        env = {**os.environ, "PYTHONPATH": str(src)}
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=900)
        wall = time.perf_counter() - started
        requests, peak = len(server.requests), server.peak_in_flight
    judged = _judged(db)
    warnings = [line for line in done.stderr.splitlines() if line.startswith("WARNING")]
    return {"source": str(src), "props": props, "exit": done.returncode, "judged": judged,
            "requests": requests, "extra_requests_pct": round(100 * (requests - PAIRS) / PAIRS, 1),
            "peak_in_flight": peak, "wall_s": round(wall, 1),
            "ideal_wall_s": round(PAIRS * LATENCY_S, 1), "warning_lines": len(warnings)}  # fmt: skip


def _judged(db: Path) -> int:
    import sqlite3

    if not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        return con.execute("select count(*) from judgments").fetchone()[0]


def tables(result: dict) -> list[Table]:
    """The stored rows, one line per run."""
    return [dict_table(result["rows"])]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--src", type=Path, action="append", help="source trees to measure")
    args = parser.parse_args()
    sources = args.src or [ROOT / "src"]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, src in enumerate(sources):
            for props in (False, True):
                rows.append(run(src, props, Path(tmp), f"{i}-{props}"))
                print(json.dumps(rows[-1]), flush=True)
    result = {"pairs": PAIRS, "latency_s": LATENCY_S, "timeout_s": TIMEOUT_S,
              "load_before": os.getloadavg()[0], "rows": rows}  # fmt: skip
    write_results(RESULTS, result)
    print_tables(tables(result))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
