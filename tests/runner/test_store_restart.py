"""PostgreSQL goes away under a running ``docket judge``: one line that says so and that a
rerun resumes (not "check the --db setting"), and the rerun does resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docket.store import load_judgments, open_store
from tests.pg_helpers import PgOutage, pg_schema_url
from tests.scripted_server import serve

ROOT = Path(__file__).resolve().parents[2]
GOOD = json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "scripted"})
PAIRS = 40


def _pairs(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.jsonl"
    rows = [{"qid": "q", "query": "egg", "docid": f"d{i}", "text": f"Egg {i}."}
            for i in range(PAIRS)]  # fmt: skip
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _judge(pairs: Path, model: str, db: str) -> subprocess.Popen:
    command = [
        sys.executable, "-m", "docket", "judge", str(pairs), "--method", "single",
        "--model", model, "--db", db, "--job", "j", "--cache", "off", "--concurrency", "2",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.Popen(command, env=env, cwd=pairs.parent, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip


def _saved(url: str) -> int:
    store = open_store(url)
    try:
        with store.read_session() as session:
            return len(load_judgments(session, "j"))
    finally:
        store.close()


def test_a_postgres_restart_says_the_server_went_away_and_a_rerun_resumes(
    tmp_path: Path,
) -> None:
    base = os.environ.get("DOCKET_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("DOCKET_TEST_POSTGRES_URL not set (run scripts/test-services.sh)")
    direct = pg_schema_url(base)
    relay = PgOutage(direct)
    pairs = _pairs(tmp_path)
    try:
        with serve(lambda _body: GOOD, delay_s=0.1) as server:
            process = _judge(pairs, server.model(), relay.url)
            deadline = time.monotonic() + 60
            while _saved(direct) < 4 if _has_job(direct) else True:
                assert process.poll() is None, process.communicate()
                assert time.monotonic() < deadline
                time.sleep(0.1)
            relay.stop()
            out, err = process.communicate(timeout=60)
            relay.start()
            assert process.returncode not in (0, None), out + err
            said = " ".join((out + err).split())
            assert "went away" in said and "resumes" in said, said
            assert "check the --db setting" not in said and "Traceback" not in said
            assert _saved(direct) < PAIRS
            rerun = _judge(pairs, server.model(), relay.url)
            out, err = rerun.communicate(timeout=120)
            assert rerun.returncode == 0, out + err[-3000:]
        assert _saved(direct) == PAIRS
    finally:
        relay.close()


def _has_job(url: str) -> bool:
    from sqlalchemy import create_engine, inspect

    engine = create_engine(url)
    try:
        return inspect(engine).has_table("judgments")
    finally:
        engine.dispose()
