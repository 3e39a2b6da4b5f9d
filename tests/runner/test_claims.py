"""Two ``docket judge`` processes on one job share it: every pair judged once, paid once."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from sqlalchemy import delete

from docket.store import load_judgments, open_store, upsert_job
from docket.store.claims import DONE, claim, mark_done
from docket.store.tables import Job, JobNote, JobSpend, JudgmentRecord, PairClaim
from tests.pg_helpers import pg_schema_url
from tests.scripted_server import serve, user_text

ROOT = Path(__file__).resolve().parents[2]
GOOD = json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "scripted"})
PAIRS = 60


def _pairs(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.jsonl"
    rows = [
        {"qid": f"q{i % 5}", "query": "boil an egg", "docid": f"d{i}", "text": f"Egg note {i}."}
        for i in range(PAIRS)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _worker(pairs: Path, model: str, db: str, job: str, tmp_path: Path) -> subprocess.Popen:
    command = [
        sys.executable, "-m", "docket", "judge", str(pairs), "--method", "single",
        "--model", model, "--db", db, "--job", job, "--cache", "off", "--concurrency", "4",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "DOCKET_DB": db}
    return subprocess.Popen(command, env=env, cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def _left_to_other(out: str) -> int:
    found = re.search(r"(\d+) pairs were being judged by another worker", out)
    return int(found.group(1)) if found else 0


def _two_workers_share(db: str, tmp_path: Path) -> None:
    job = f"shared-{uuid.uuid4().hex[:8]}"
    pairs = _pairs(tmp_path)
    with serve(lambda body: GOOD if "Egg note" in user_text(body) else "?", delay_s=0.2) as server:
        workers = [_worker(pairs, server.model(), db, job, tmp_path) for _ in range(2)]
        outputs = [w.communicate(timeout=120) for w in workers]
        calls = [user_text(body) for body in server.requests]
    for worker, (out, err) in zip(workers, outputs, strict=True):
        # The worker that ends first waits while the other saves the pairs it holds: the
        # job is complete when either exits, so both exit 0 and leave nothing to the other.
        assert worker.returncode == 0, err[-2000:]
        assert _left_to_other(out) == 0 and "incomplete" not in out
    store = open_store(db)
    try:
        with store.session() as session:
            records = load_judgments(session, job)
            live = session.query(PairClaim).filter(
                PairClaim.job == job, PairClaim.expires_at < DONE
            )
            assert live.count() == 0  # no lease left: every claim is a done marker
        assert sorted(r.docid for r in records) == sorted(f"d{i}" for i in range(PAIRS))
        assert all(r.label == 1 and r.decided_by == "judge" for r in records)
        assert len(calls) == PAIRS  # each pair paid once across both processes
        stored = [int(out.split(" pairs in ")[0].split()[-1]) for out, _ in outputs]
        assert stored == [PAIRS, PAIRS]
        now = [int(re.search(r"(\d+) judged by this run", out).group(1)) for out, _ in outputs]
        assert all(n > 0 for n in now) and sum(now) == PAIRS  # shared, at the same time
    finally:
        with store.session() as session:
            for table in (PairClaim, JudgmentRecord, JobSpend, JobNote, Job):
                key = table.name if table is Job else table.job
                session.execute(delete(table).where(key == job))
        store.close()


def test_an_owner_takes_back_its_own_live_leases(store) -> None:  # type: ignore[no-untyped-def]
    keys = [("q", "d1"), ("q", "d2")]
    with store.session() as session:
        upsert_job(session, name="j", method="single", model="m", options={}, source="t")
        assert claim(session, "j", keys, "driver/0") == set(keys)
    with store.session() as session:
        assert claim(session, "j", keys, "driver/1") == set()  # live leases of another owner
        assert claim(session, "j", keys, "driver/0") == set(keys)  # the batch, run again
        mark_done(session, "j", keys[:1], "driver/0")
    with store.session() as session:
        assert claim(session, "j", keys, "driver/0") == {keys[1]}  # a done pair stays done


def test_two_processes_share_a_sqlite_job(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.db")
    open_store(db).close()
    _two_workers_share(db, tmp_path)


@pytest.mark.skipif(
    "DOCKET_TEST_POSTGRES_URL" not in os.environ, reason="PostgreSQL not started (make test)"
)
def test_two_processes_share_a_postgres_job(tmp_path: Path) -> None:
    url = pg_schema_url(os.environ["DOCKET_TEST_POSTGRES_URL"])
    open_store(url).close()
    _two_workers_share(url, tmp_path)


def test_a_surviving_worker_takes_over_a_killed_peers_pairs_at_once(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.db")
    open_store(db).close()
    pairs = _pairs(tmp_path)
    with serve(lambda body: GOOD if "Egg note" in user_text(body) else "?", delay_s=0.3) as server:
        doomed, survivor = (_worker(pairs, server.model(), db, "j", tmp_path) for _ in range(2))
        while len(server.requests) < 12:  # both hold leases (5 minutes each) and call
            time.sleep(0.05)
        doomed.kill()  # no handler runs: its leases stay
        doomed.communicate(timeout=30)  # reaped, as a shell does: its pid is gone
        started = time.monotonic()
        out, err = survivor.communicate(timeout=120)
    assert survivor.returncode == 0, out + err[-2000:]
    assert "incomplete" not in out and _left_to_other(out) == 0
    assert time.monotonic() - started < 60  # it did not wait for the dead leases to expire
    store = open_store(db)
    with store.read_session() as session:
        assert sorted(r.docid for r in load_judgments(session, "j")) == sorted(
            f"d{i}" for i in range(PAIRS)
        )
    store.close()
