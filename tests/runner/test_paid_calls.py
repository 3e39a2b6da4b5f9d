"""A call paid for is never paid again: ``--cache off`` runs stopped mid-pair, then resumed.

Each run is a real ``python -m docket judge`` process against a scripted server that
answers a fixed number of requests and then holds the rest, so the run is stopped (a cap,
Ctrl-C, SIGKILL) with pairs half-way. The requests the server answered over run and resume
must equal those an uninterrupted run of the same job needs: every answered call of an
unfinished pair was kept with the job in the store (the call journal) and replayed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from docket.store import load_judgments, open_store
from tests.pg_helpers import pg_schema_url
from tests.scripted_server import Reply, serve, user_text

ROOT = Path(__file__).resolve().parents[2]
PAIRS = 6
GOOD = json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "scripted"})
METHODS = {"majority": ("--samples", "3"), "dream": ()}


def _stance(body: dict[str, Any]) -> str:
    """Each DREAM agent keeps its stance: 2 rounds x 2 agents, every pair escalated."""
    label = "relevant" if re.search(r"\bRELEVANT\b", user_text(body)) else "irrelevant"
    return json.dumps({"label": label, "evidence": ["S1"], "reasoning": f"I hold {label}."})


class Gate:
    """Answers ``open_for`` requests, then holds each further one until released.

    ``answered`` counts the replies the client could read; a held request whose client
    died (or gave up) is not one.
    """

    def __init__(self, method: str, open_for: float, flaky: bool = False) -> None:
        self.reply = _stance if method == "dream" else (lambda _body: GOOD)
        self.left, self.answered, self.held = open_for, 0, 0
        self.lock, self.release = threading.Lock(), threading.Event()
        self.flaky, self.started = flaky, set()

    def __call__(self, body: dict[str, Any]) -> Reply | str:
        with self.lock:
            self.left -= 1
            hold = self.left < 0
            self.held += hold
            doc = re.search(r"Egg note \d+", user_text(body))
            first = doc is not None and doc.group() not in self.started
            self.started.add(doc.group() if doc else "")
        if self.flaky and first:  # each pair's first request fails once: one retry a pair
            return Reply(500, {"error": {"message": "injected fault"}})
        if hold:
            self.release.wait(60)
            return Reply(503, {"error": "held"})
        with self.lock:
            self.answered += 1
        return self.reply(body)

    def open(self) -> None:
        """Answer everything from now on."""
        with self.lock:
            self.left = float("inf")
        self.release.set()


def _pairs(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.jsonl"
    rows = [
        {"qid": f"q{i % 2}", "query": "boil an egg", "docid": f"d{i}", "text": f"Egg note {i}."}
        for i in range(PAIRS)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _judge(
    pairs: Path, model: str, db: str, method: str, *extra: str, retries: int = 0
) -> subprocess.Popen:
    command = [
        sys.executable, "-m", "docket", "judge", str(pairs), "--method", method, "--model",
        model, "--db", db, "--job", "j", "--cache", "off", "--max-retries", str(retries),
        "--concurrency", str(PAIRS), *METHODS[method], *extra,
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "NO_COLOR": "1"}
    # Ctrl-C's default in the run, even when this test process inherited SIGINT ignored (a
    # suite started with `&` from a script): the test sends SIGINT as a terminal would.
    return subprocess.Popen(command, env=env, cwd=pairs.parent, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # fmt: skip


def _needed(method: str) -> int:
    """The requests an uninterrupted run of the job makes (``test_the_calls_a_job_needs``)."""
    return PAIRS * (4 if method == "dream" else 3)  # 2 agents x 2 rounds; 3 votes


@pytest.mark.parametrize("method", sorted(METHODS))
def test_the_calls_a_job_needs(tmp_path: Path, method: str) -> None:
    gate = Gate(method, float("inf"))
    with serve(gate) as server:
        run = _judge(_pairs(tmp_path), server.model(), str(tmp_path / "ref.db"), method)
        _out, err = run.communicate(timeout=120)
    assert run.returncode == 0, err[-3000:]
    assert gate.answered == _needed(method)


def _saved(db: str) -> int:
    return len(_judgments(db))


def _judgments(db: str) -> list:
    store = open_store(db)
    try:
        with store.read_session() as session:
            return load_judgments(session, "j")
    finally:
        store.close()


def _calls_in_pair_usage(db: str) -> tuple[int, int]:
    """Calls in the stored pairs' usage, and how many of them a resume replayed."""
    usages = [j.usage for j in _judgments(db)]
    return sum(u["calls"] for u in usages), sum(u.get("replayed", 0) for u in usages)


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store of each kind (PostgreSQL when the test services run)."""
    if request.param == "sqlite":
        return str(tmp_path / "d.db")
    base = os.environ.get("DOCKET_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("DOCKET_TEST_POSTGRES_URL not set (run scripts/test-services.sh)")
    return pg_schema_url(base)


def _wait_held(gate: Gate, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while gate.held == 0:
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "no request was held within 60 s"
        time.sleep(0.05)


@pytest.mark.parametrize("method", sorted(METHODS))
@pytest.mark.parametrize("stop", ["sigint", "sigkill"])
def test_a_stopped_run_resumes_without_paying_a_call_twice(
    tmp_path: Path, db: str, method: str, stop: str
) -> None:
    needed = _needed(method)
    pairs = _pairs(tmp_path)
    gate = Gate(method, open_for=needed // 2 + 1)  # some pairs done, others half-way
    with serve(gate) as server:
        process = _judge(pairs, server.model(), db, method)
        _wait_held(gate, process)
        time.sleep(1.5)  # the answers before the hold are kept (every half second)
        process.send_signal(signal.SIGINT if stop == "sigint" else signal.SIGKILL)
        _out, err = process.communicate(timeout=60)
        assert process.returncode == (130 if stop == "sigint" else -9), err[-3000:]
        before = gate.answered
        assert _saved(db) < PAIRS
        gate.open()
        rerun = _judge(pairs, server.model(), db, method)
        out, err = rerun.communicate(timeout=120)
        assert rerun.returncode == 0, err[-3000:]
    assert _saved(db) == PAIRS
    assert before < needed and gate.answered == needed  # run + resume paid each call once
    # Each pair's usage counts every call it was answered with, replayed ones included
    # (they were paid, in the stopped run), so the job's pairs add up to what it paid.
    calls, replayed = _calls_in_pair_usage(db)
    assert calls == needed and replayed > 0
    assert f"this run replayed {replayed} calls" in " ".join(out.split())


@pytest.mark.parametrize("method", sorted(METHODS))
def test_a_capped_run_finishes_the_pairs_it_started_and_resumes_without_paying_twice(
    tmp_path: Path, db: str, method: str
) -> None:
    needed = _needed(method)
    pairs = _pairs(tmp_path)
    gate = Gate(method, float("inf"), flaky=True)  # every pair needs one retry
    with serve(gate) as server:
        cap = ("--max-calls", str(needed // 2))
        capped = _judge(pairs, server.model(), db, method, *cap, retries=2)
        _out, err = capped.communicate(timeout=120)
        assert capped.returncode == 5, err[-3000:]
        before, saved = gate.answered, _saved(db)
        assert 0 < saved < PAIRS
        assert before == saved * needed // PAIRS  # no pair was dropped half-way
        rerun = _judge(pairs, server.model(), db, method, retries=2)
        _out, err = rerun.communicate(timeout=120)
        assert rerun.returncode == 0, err[-3000:]
    assert _saved(db) == PAIRS and gate.answered == needed
