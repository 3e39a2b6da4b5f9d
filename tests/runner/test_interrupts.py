"""Interrupted runs of ``python -m docket judge``, as real processes sent real signals.

SIGTERM (what schedulers send) and SIGINT (Ctrl-C) stop the run: the batch being saved is
committed with its review tasks, the resume line is printed and the exit code is 143 or
130. A run killed outright (SIGKILL) leaves leases that a rerun on this host takes back at
once, because their owner's process is gone.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from docket.review.models import ReviewTask
from docket.store import load_judgments, open_store
from docket.store.claims import DONE
from docket.store.tables import PairClaim
from tests.scripted_server import serve, user_text

ROOT = Path(__file__).resolve().parents[2]
PAIRS = 10


def _stance(body: dict) -> str:
    """Each agent keeps its stance: DREAM never agrees, so every pair is escalated."""
    label = "relevant" if re.search(r"\bRELEVANT\b", user_text(body)) else "irrelevant"
    return json.dumps({"label": label, "evidence": ["S1"], "reasoning": f"I hold {label}."})


def _pairs(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.jsonl"
    rows = [
        {"qid": f"q{i % 4}", "query": "boil an egg", "docid": f"d{i}", "text": f"Egg note {i}."}
        for i in range(PAIRS)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _judge(pairs: Path, model: str, db: Path, ignore_sigint: bool = False) -> subprocess.Popen:
    command = [
        sys.executable, "-m", "docket", "judge", str(pairs), "--method", "dream",
        "--model", model, "--db", str(db), "--job", "j", "--cache", "off",
        "--concurrency", "2", "--max-retries", "0",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1"}
    # A command started with `&` from a script inherits SIGINT ignored; otherwise it has
    # Ctrl-C's default, whatever this test process inherited (a suite run in the background).
    handling = signal.SIG_IGN if ignore_sigint else signal.SIG_DFL
    return subprocess.Popen(command, env=env, cwd=pairs.parent, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, handling))  # fmt: skip


def _saved(db: Path) -> int:
    if not db.exists():
        return 0
    store = open_store(db)
    try:
        with store.read_session() as session:
            return len(load_judgments(session, "j"))
    finally:
        store.close()


def _wait_for_saved(db: Path, process: subprocess.Popen, at_least: int) -> None:
    deadline = time.monotonic() + 60
    while _saved(db) < at_least:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no judgment saved within 60 s"
        time.sleep(0.1)


def _state(db: Path) -> tuple[set[str], set[str], int]:
    """Escalated docids, docids with a review task, live leases."""
    store = open_store(db)
    try:
        with store.session() as session:
            records = load_judgments(session, "j")
            tasks = session.query(ReviewTask).filter_by(job="j").all()
            live = session.query(PairClaim).filter(PairClaim.expires_at < DONE).count()
    finally:
        store.close()
    escalated = {r.docid for r in records if r.decided_by == "escalated"}
    return escalated, {t.item_key.split("\t")[1] for t in tasks}, live


@pytest.mark.parametrize(
    ("sent", "code", "said", "ignore_sigint"),
    [
        (signal.SIGTERM, 143, "terminated (SIGTERM)", False),
        (signal.SIGINT, 130, "interrupted", False),
        (signal.SIGTERM, 143, "terminated (SIGTERM)", True),
    ],
    ids=["sigterm", "sigint", "sigterm-with-sigint-ignored"],
)
def test_a_signal_saves_the_batch_prints_the_resume_line_and_exits(
    tmp_path: Path, sent: signal.Signals, code: int, said: str, ignore_sigint: bool
) -> None:
    pairs, db = _pairs(tmp_path), tmp_path / "d.db"
    with serve(_stance, delay_s=0.1) as server:
        process = _judge(pairs, server.model(), db, ignore_sigint)
        _wait_for_saved(db, process, at_least=2)
        process.send_signal(sent)
        _out, err = process.communicate(timeout=60)
        calls_before = len(server.requests)
        escalated, queued, live = _state(db)
        assert process.returncode == code, err[-3000:]
        assert said in err and "run the same command again to resume" in err
        assert "Traceback" not in err
        assert 2 <= len(escalated) < PAIRS  # stopped part-way, the saved pairs kept
        assert queued == escalated  # every saved escalation has its review task
        assert live == 0  # the stopped run freed its leases
        rerun = _judge(pairs, server.model(), db)
        _out, err = rerun.communicate(timeout=120)
        assert rerun.returncode == 0, err[-3000:]
        # The rerun judged only what was not saved: at most 4 calls (2 agents x 2 rounds) a
        # pair, fewer where the stopped run's answers were kept (tests/runner/test_paid_calls).
        assert len(server.requests) - calls_before <= 4 * (PAIRS - len(escalated))
    escalated, queued, _ = _state(db)
    assert len(escalated) == PAIRS and queued == escalated


def test_a_rerun_after_sigkill_takes_the_dead_runs_pairs_back_at_once(tmp_path: Path) -> None:
    pairs, db = _pairs(tmp_path), tmp_path / "d.db"
    with serve(_stance, delay_s=0.1) as server:
        process = _judge(pairs, server.model(), db)
        _wait_for_saved(db, process, at_least=2)
        process.kill()  # no handler runs: its leases stay, for 5 minutes
        process.communicate(timeout=30)
        _escalated, _queued, live = _state(db)
        assert live > 0  # the killed run left leases behind
        started = time.monotonic()
        rerun = _judge(pairs, server.model(), db)
        out, err = rerun.communicate(timeout=120)
        assert rerun.returncode == 0, out + err[-3000:]
        assert "held by other workers" not in err
        assert time.monotonic() - started < 120  # never waits for the leases to expire
    escalated, queued, live = _state(db)
    assert len(escalated) == PAIRS and queued == escalated and live == 0
