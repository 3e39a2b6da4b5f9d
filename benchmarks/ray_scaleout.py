"""Ray scale-out against a mock chat server: who writes the results, and what the driver does.

The mock server of ``judge_throughput.py`` (its own process, 200 ms per call) answers a
single judge for N pairs, 64 pairs at once, in three ways:

- the local executor on PostgreSQL (the reference: one process claims, calls and commits);
- Ray with 2 actors on SQLite: the actors call, the driver claims and commits;
- Ray with 2 actors on PostgreSQL: each actor claims, calls and saves its batches.

For each it reports pairs/s, the calls the server answered (each pair paid once: N), the
driver's CPU time, and the SQL statements the driver ran (all, and writes: INSERT,
UPDATE, DELETE), counted with a SQLAlchemy event on the driver's engine.

    python benchmarks/ray_scaleout.py [--quick] [--postgres URL]

PostgreSQL comes from ``--postgres`` or ``DOCKET_TEST_POSTGRES_URL``; the run uses a
schema of its own and drops it at the end. Prints a table and writes
benchmarks/results/ray_scaleout.json.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "ray_scaleout.json"
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _table import Table, dict_table, print_tables, write_results  # noqa: E402
from judge_throughput import MockServer, write_pairs  # noqa: E402  (a sibling script)
from sqlalchemy import create_engine, event, text  # noqa: E402

from docket.config import Settings  # noqa: E402
from docket.jobs.compose import make_judge  # noqa: E402
from docket.relevance import JudgeOptions  # noqa: E402
from docket.relevance.pairs_io import scan_pairs  # noqa: E402
from docket.runner import judge_pairs  # noqa: E402
from docket.runner.ray_executor import RayExecutor, init_ray  # noqa: E402
from docket.store import open_store, upsert_job  # noqa: E402
from docket.store.base import Store  # noqa: E402

CONCURRENCY = 64
WRITES = ("INSERT", "UPDATE", "DELETE")


def _schema(base: str, name: str, drop: bool = False) -> str:
    """Create (or drop) schema ``name``; return a URL whose search path is it."""
    engine = create_engine(base)
    with engine.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {name} CASCADE" if drop else f"CREATE SCHEMA {name}"))
    engine.dispose()
    return f"{base}?options=-csearch_path%3D{name}"


def _count_statements(store: Store) -> dict[str, int]:
    counts = {"statements": 0, "writes": 0}

    def count(_conn, _cursor, statement: str, _params, _context, many: bool) -> None:  # type: ignore[no-untyped-def]
        counts["statements"] += 1
        if statement.lstrip().upper().startswith(WRITES):
            counts["writes"] += 1

    event.listen(store.engine, "before_cursor_execute", count)
    return counts


def run(name: str, db: str, pairs: Path, server: MockServer, ray_workers: int) -> dict:
    """One job of ``pairs`` into ``db``; ``ray_workers`` 0 judges in this process."""
    settings = Settings(model=server.model(CONCURRENCY), cache="off")
    options = JudgeOptions.checked(method="single")
    store = open_store(db)
    with store.session() as session:
        upsert_job(session, name="bench", method="single", model="mock", options={}, source="b")
    counts = _count_statements(store)
    executor = None
    if ray_workers:
        executor = RayExecutor(partial(make_judge, options, settings), workers=ray_workers)
        executor.start()
    server.reset()
    loaded = scan_pairs(pairs)
    start, start_cpu = time.perf_counter(), time.process_time()
    try:
        outcome = asyncio.run(
            judge_pairs(store, "bench", loaded, make_judge(options, settings),
                          concurrency=CONCURRENCY, executor=executor)
        )  # fmt: skip
    finally:
        if executor is not None:
            executor.stop()
    wall, cpu = time.perf_counter() - start, time.process_time() - start_cpu
    store.close()
    n = len(loaded)
    return {
        "run": name, "pairs": n, "judged": outcome.judged, "pairs_per_s": round(n / wall, 1),
        "server_calls": server.stats()["calls"], "driver_cpu_s": round(cpu, 2),
        "driver_cpu_ms_per_pair": round(1000 * cpu / n, 2), **counts,
    }  # fmt: skip


def tables(result: dict) -> list[Table]:
    """The stored rows, one line per run."""
    return [dict_table(result["rows"])]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--postgres", default=os.environ.get("DOCKET_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    if not args.postgres:
        sys.exit("give --postgres URL or set DOCKET_TEST_POSTGRES_URL")
    n = 400 if args.quick else 2000
    env = {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "benchmarks")])}
    init_ray(temp_dir=ROOT / ".cache" / "r", num_cpus=2, runtime_env={"env_vars": env})
    server = MockServer(0.2)
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    pg = _schema(args.postgres, schema)
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            pairs = Path(tmp) / "pairs.jsonl"
            write_pairs(pairs, n)
            rows.append(run("local, PostgreSQL", pg, pairs, server, 0))
            rows.append(run("Ray 2 actors, SQLite", f"{tmp}/ray.db", pairs, server, 2))
            _schema(args.postgres, schema, drop=True)
            pg = _schema(args.postgres, schema)
            rows.append(run("Ray 2 actors, PostgreSQL", pg, pairs, server, 2))
    finally:
        server.stop()
        _schema(args.postgres, schema, drop=True)
    result = {"latency_s": 0.2, "concurrency": CONCURRENCY,
              "load_average": os.getloadavg()[0], "rows": rows}  # fmt: skip
    write_results(RESULTS, result)
    print_tables(tables(result))


if __name__ == "__main__":
    main()
