"""Speed of the review app on SQLite: page latency and decisions under concurrency.

Builds a temporary store with ``--tasks`` relevance tasks (k = 2; default 100,000,
inserted in bulk; every 10th assigned, every 20th decided once), then measures:

- the item page and queue pages (HTML: first page, a keyset page deep inside, a
  search by qid, a disagreement filter; as a reviewer and as an admin), the next-task
  jump, the admin page and the statistics page through FastAPI's test client: median
  and p95 over ``--runs`` requests (5 for the statistics page). Target: the queue page
  under 50 ms median at 100,000 tasks;
- decision throughput: ``--threads`` reviewers deciding the first ``--decide`` tasks
  at once through ``record_decision`` (each decision its own transaction), checking
  that none is lost and none is double-counted;
- a stranger flood (issue 19): one client without a token posts the worst bodies under
  the 1 MiB limit to the decision route back to back while ``GET /login`` and a small
  authenticated ``GET /next.json`` are timed on a real server; target p95 < 50 ms.
  ``--flood-only`` runs just this and writes benchmarks/results/review_app_strangers.json.

Usage:
    .venv/bin/python benchmarks/review_app.py [--tasks 100000] [--runs 30] [--threads 4]

Prints a table and writes benchmarks/results/review_app.json.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import func, insert, select

from docket.review.auth import add_reviewer
from docket.review.errors import TaskClosedError
from docket.review.facets import facets_of
from docket.review.models import Assignment, Decision, Reviewer, ReviewTask, TaskFacets
from docket.review.payloads import validate_payload
from docket.review.queue import record_decision
from docket.review.web import create_app
from docket.store.base import Store, open_store, utcnow
from docket.web import WebSettings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from tests.review.review_helpers import wound_payload  # noqa: E402

sys.path.insert(0, str(ROOT / "benchmarks"))
from _table import Table, print_tables, write_results  # noqa: E402
from stranger_flood import Probe, flood_table, start_process, worst_bodies  # noqa: E402
from stranger_flood import run as run_flood  # noqa: E402


def _seed(store: Store, tasks: int, reviewers: int, race: int) -> list[str]:
    """Reviewers r0 (admin) .. rN, and ``tasks`` tasks inserted in bulk with their facets.

    The first ``race`` tasks get no assignment and no decision: the decision race uses them.
    """
    payload = validate_payload("relevance", wound_payload(gold=1))
    facet = facets_of(0, "relevance", payload)
    with store.session() as session:
        tokens = [add_reviewer(session, f"r{i}", admin=i == 0)[1] for i in range(reviewers)]
        ids = [r.id for r in session.scalars(select(Reviewer).order_by(Reviewer.id))]
    for start in range(0, tasks, 5000):
        batch = range(start + 1, min(start + 5000, tasks) + 1)
        with store.session() as session:
            session.execute(insert(ReviewTask), [_task(t, payload) for t in batch])
            session.execute(insert(TaskFacets), [_facets(t, facet) for t in batch])
            session.execute(
                insert(Assignment),
                [
                    {"task_id": t, "reviewer_id": ids[1 + t % (reviewers - 1)]}
                    for t in batch
                    if t % 10 == 0 and t > race
                ],
            )
            session.execute(
                insert(Decision),
                [
                    {"task_id": t, "reviewer_id": ids[0], "label": 1}
                    for t in batch
                    if t % 20 == 5 and t > race
                ],
            )
    return tokens


def _facets(t: int, facet: TaskFacets) -> dict:
    return {
        "task_id": t,
        "qid": f"q{t}",
        "docid": f"d{t}",
        "disagreement": facet.disagreement,
        "title": facet.title,
        "subtitle": f"d{t}",
    }


def _task(t: int, payload: dict) -> dict:
    return {
        "id": t,
        "job": f"bench{t % 3}",
        "kind": "relevance",
        "item_key": f"q{t}\td{t}",
        "payload": payload,
        "required_reviews": 2,
        "blind": False,
        "status": "open",
        "revision": 0,
        "created_at": utcnow(),
    }


def _login(client: TestClient, token: str) -> None:
    nonce = client.get("/login", headers={"Accept": "application/json"}).json()["nonce"]
    response = client.post(
        "/login", data={"token": token, "csrf_token": nonce}, follow_redirects=False
    )
    if response.status_code != 303:
        raise RuntimeError(f"login failed: HTTP {response.status_code}")


def _latency(client: TestClient, path: str, runs: int) -> dict[str, float]:
    for _ in range(3):  # warm the page cache and the statement cache first
        client.get(path)
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
        stored = session.scalar(select(func.count(Decision.id)).where(Decision.task_id <= tasks))
    attempts = sum(accepted) + sum(refused)
    return {
        "attempts": attempts,
        "accepted": sum(accepted),
        "stored_new": stored,
        "expected": 2 * tasks,
        "attempts_per_s": attempts / elapsed,
        "seconds": elapsed,
    }


def _pages(store: Store, tokens: list[str], tasks: int, runs: int) -> dict[str, dict]:
    mid = tasks // 2
    views = {
        "item page": (tokens[1], "/tasks/1"),
        "queue, reviewer, first page": (tokens[1], "/queue"),
        "queue, reviewer, keyset page mid-queue": (tokens[1], f"/queue?after={mid}"),
        "queue, reviewer, search by qid": (tokens[1], f"/queue?status=all&q=q{mid}"),
        "queue, reviewer, disagreement filter": (tokens[1], "/queue?disagreement=split&job=bench1"),
        "queue, admin, all tasks": (tokens[0], "/queue?status=all"),
        "queue, admin, by reviewer": (tokens[0], "/queue?status=all&reviewer=r2"),
        "next task (redirect)": (tokens[1], "/next.json"),
        "admin page": (tokens[0], "/admin"),
        "statistics page (reads every decided task)": (tokens[0], "/stats"),
    }
    results = {}
    for name, (token, path) in views.items():
        with TestClient(create_app(store)) as client:
            _login(client, token)
            n = min(runs, 5) if path == "/stats" else runs  # about a second per request
            results[name] = {"path": path, **_latency(client, path, n)}
    return results


def _strangers(path: Path, token: str, seconds: float) -> dict:
    """Probe latencies on a real server while a tokenless client floods the decision route."""
    settings = WebSettings()
    url, stop = start_process(lambda: create_app(open_store(path), settings))
    probes = [
        Probe("GET /login", "GET", "/login"),
        Probe("GET /next.json (token)", "GET", "/next.json", {"Authorization": f"Bearer {token}"}),
    ]
    bodies = worst_bodies(settings.max_body_bytes, settings.max_json_depth)
    print(f"stranger flood on POST /tasks/1/decision, {seconds:.0f} s per phase:")
    try:
        return run_flood(url, "/tasks/1/decision", bodies, probes, seconds)
    finally:
        stop()


def main() -> None:
    """Run the measurements, print a table, write the JSON result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--decide", type=int, default=500, help="tasks in the decision race")
    parser.add_argument("--flood-seconds", type=float, default=10.0, help="0: no flood")
    parser.add_argument("--flood-only", action="store_true", help="only the stranger flood")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "bench.db")
        if args.flood_only:
            tokens = _seed(store, 100, 2, 0)
            store.close()
            flood = _strangers(Path(tmp) / "bench.db", tokens[1], args.flood_seconds)
            out = ROOT / "benchmarks" / "results" / "review_app_strangers.json"
            write_results(out, {"args": vars(args), "stranger_flood": flood})
            print(f"written {out.relative_to(ROOT)}")
            return
        started = time.perf_counter()
        tokens = _seed(store, args.tasks, args.threads, min(args.decide, args.tasks))
        seed_s = time.perf_counter() - started
        pages = _pages(store, tokens, args.tasks, args.runs)
        decisions = _throughput(store, min(args.decide, args.tasks), args.threads)
        store.close()
        flood = (
            _strangers(Path(tmp) / "bench.db", tokens[-1], args.flood_seconds)
            if args.flood_seconds > 0
            else None
        )
    result = {
        "args": vars(args),
        "machine": platform.platform(),
        "python": platform.python_version(),
        "target": "queue pages under 50 ms median at 100,000 tasks",
        "seed_s": seed_s,
        "pages": pages,
        "decisions": decisions,
        "stranger_flood": flood,
    }
    out = ROOT / "benchmarks" / "results" / "review_app.json"
    write_results(out, result)
    print_tables(tables(result))
    print(f"written {out.relative_to(ROOT)}")


def tables(result: dict) -> list[Table]:
    """Page latencies and the decision race (or, for a flood-only run, the flood)."""
    if "pages" not in result:
        return [flood_table(result["stranger_flood"])]
    args, decisions = result["args"], result["decisions"]
    table = Table(["measure", "median / rate", "p95 / check"],
                  title=f"{args['tasks']:,} tasks; target: {result['target']}")  # fmt: skip
    for name, v in result["pages"].items():
        table.add(name, f"{v['median_ms']:.1f} ms", f"{v['p95_ms']:.1f} ms")
    table.add(f"decisions, {args['threads']} threads",
              f"{decisions['attempts_per_s']:.0f} attempts/s",
              f"stored {decisions['stored_new']} of expected {decisions['expected']}")  # fmt: skip
    flood = result.get("stranger_flood")
    return [table, flood_table(flood)] if flood else [table]


if __name__ == "__main__":
    main()
