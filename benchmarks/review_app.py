"""Speed of the review app on SQLite: page latency and decisions under concurrency.

Builds a temporary store with ``--tasks`` relevance tasks (k = 2), then measures:

- the item page (HTML) and the queue page (HTML, all tasks) through FastAPI's test
  client: median and p95 over ``--runs`` requests;
- decision throughput: ``--threads`` reviewers deciding every task at once through
  ``record_decision`` (each decision its own transaction), checking that none is lost
  and none is double-counted.

Usage:
    .venv/bin/python benchmarks/review_app.py [--tasks 500] [--runs 30] [--threads 4]

Prints a table and writes benchmarks/results/review_app.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import func, select

from docket.review.auth import add_reviewer
from docket.review.errors import TaskClosedError
from docket.review.models import Decision
from docket.review.queue import enqueue, record_decision
from docket.review.web import create_app
from docket.store.base import Store, open_store

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.review.review_helpers import wound_payload  # noqa: E402


def _seed(store: Store, tasks: int, reviewers: int) -> list[str]:
    with store.session() as session:
        tokens = [add_reviewer(session, f"r{i}", admin=i == 0)[1] for i in range(reviewers)]
        for t in range(tasks):
            enqueue(
                session,
                job="bench",
                kind="relevance",
                item_key=f"q{t}\td{t}",
                payload=wound_payload(gold=t % 2),
                required_reviews=2,
            )
    return tokens


def _latency(client: TestClient, path: str, runs: int) -> dict[str, float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        response = client.get(path)
        times.append((time.perf_counter() - start) * 1000)
        if response.status_code != 200:
            raise RuntimeError(f"{path}: HTTP {response.status_code}")
    times.sort()
    return {"median_ms": statistics.median(times), "p95_ms": times[int(0.95 * (runs - 1))]}


def _throughput(store: Store, tasks: int, threads: int) -> dict[str, float]:
    accepted, refused = [0] * threads, [0] * threads
    barrier = threading.Barrier(threads)

    def work(i: int) -> None:
        barrier.wait()
        for task_id in range(1, tasks + 1):
            try:
                with store.session() as session:
                    record_decision(session, task_id, f"r{i}", i % 2, seconds=5)
                accepted[i] += 1
            except TaskClosedError:
                refused[i] += 1

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - start
    with store.session() as session:
        stored = session.scalar(select(func.count(Decision.id)))
    attempts = sum(accepted) + sum(refused)
    return {
        "attempts": attempts,
        "accepted": sum(accepted),
        "stored": stored,
        "expected": 2 * tasks,
        "attempts_per_s": attempts / elapsed,
        "seconds": elapsed,
    }


def main() -> None:
    """Run the measurements, print a table, write the JSON result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=500)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--threads", type=int, default=4)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "bench.db")
        tokens = _seed(store, args.tasks, args.threads)
        with TestClient(create_app(store)) as client:
            client.post("/login", data={"token": tokens[0]})
            item = _latency(client, "/tasks/1", args.runs)
            queue = _latency(client, "/queue?status=all", args.runs)
        decisions = _throughput(store, args.tasks, args.threads)
        store.close()
    rows = [
        ("item page (HTML)", f"{item['median_ms']:.1f} ms", f"{item['p95_ms']:.1f} ms"),
        (
            f"queue page, {args.tasks} tasks",
            f"{queue['median_ms']:.1f} ms",
            f"{queue['p95_ms']:.1f} ms",
        ),
        (
            f"decisions, {args.threads} threads",
            f"{decisions['attempts_per_s']:.0f} attempts/s",
            f"stored {decisions['stored']} of expected {decisions['expected']}",
        ),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  median / rate      p95 / check")
    for name, first, second in rows:
        print(f"{name:<{width}}  {first:<18} {second}")
    result = {
        "args": vars(args),
        "machine": platform.platform(),
        "python": platform.python_version(),
        "item_page": item,
        "queue_page": queue,
        "decisions": decisions,
    }
    out = ROOT / "benchmarks" / "results" / "review_app.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
