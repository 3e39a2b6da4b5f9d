"""The runner commits each judgment at once, resumes without LLM calls, keeps work on failure."""

from __future__ import annotations

import asyncio
import contextlib

from docket.relevance.types import Pair
from docket.runner import judge_pairs
from docket.store import load_judgments, open_store, upsert_job
from tests.helpers_judges import KeywordJudge

PAIRS = [
    Pair("q1", "egg boiling", "d1", "An egg boils in six minutes."),
    Pair("q1", "egg boiling", "d2", "Chickens need light."),
    Pair("q2", "seasons cause", "d3", "The tilt is the cause of seasons."),
    Pair("q2", "seasons cause", "d4", "The moon is far away."),
]


def _store_with_job(db_url: str):  # type: ignore[no-untyped-def]
    store = open_store(db_url)
    with store.session() as session:
        upsert_job(session, name="j", method="keyword", model="none", options={}, source="t")
    return store


def test_rerun_skips_finished_pairs_without_calls(db_url: str) -> None:
    store = _store_with_job(db_url)
    first = KeywordJudge()
    outcome = asyncio.run(judge_pairs(store, "j", PAIRS, first, concurrency=2))
    assert (outcome.judged, outcome.skipped) == (4, 0)
    second = KeywordJudge()
    outcome = asyncio.run(judge_pairs(store, "j", PAIRS, second))
    assert (outcome.judged, outcome.skipped, second.calls) == (0, 4, [])
    with store.session() as session:
        labels = {r.docid: r.label for r in load_judgments(session, "j")}
    assert labels == {"d1": 1, "d2": 0, "d3": 1, "d4": 0}


def test_a_dead_model_keeps_finished_pairs_and_reports(db_url: str) -> None:
    store = _store_with_job(db_url)
    judge = KeywordJudge(fail_on={"d3"})
    outcome = asyncio.run(judge_pairs(store, "j", PAIRS, judge, concurrency=1))
    assert outcome.error is not None and "server gone" in str(outcome.error)
    with store.session() as session:
        saved = {r.docid for r in load_judgments(session, "j")}
    assert {"d1", "d2"} <= saved and "d3" not in saved
    resumed = KeywordJudge()
    outcome = asyncio.run(judge_pairs(store, "j", PAIRS, resumed, concurrency=1))
    assert outcome.error is None
    assert set(resumed.calls) == {"d1", "d2", "d3", "d4"} - saved


class _StuckOnD3(KeywordJudge):
    """Answers at once, but for d3, which never comes back before the run is cancelled."""

    async def judge(self, pair):  # type: ignore[no-untyped-def]
        if pair.docid == "d3":
            await asyncio.sleep(30)
        return await super().judge(pair)


def _run_then_cancel(store, judge) -> None:  # type: ignore[no-untyped-def]
    """Run the job, then cancel it as Ctrl-C does: the run never reaches its end."""

    async def run() -> None:
        task = asyncio.create_task(judge_pairs(store, "j", PAIRS, judge, concurrency=4))
        await asyncio.sleep(0.5)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(run())


def test_interrupt_keeps_finished_work(db_url: str) -> None:
    store = _store_with_job(db_url)
    _run_then_cancel(store, _StuckOnD3())
    with store.session() as session:
        saved = {r.docid for r in load_judgments(session, "j")}
    assert saved == {"d1", "d2", "d4"}


def _dead_pid() -> int:
    """The pid of a process of this host that has exited (and was reaped)."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _lease(store, owner: str, keys: list[tuple[str, str]]) -> None:  # type: ignore[no-untyped-def]
    from docket.store.claims import claim

    with store.session() as session:
        assert claim(session, "j", keys, owner, lease_s=3600) == set(keys)


def test_a_rerun_takes_back_at_once_the_pairs_of_a_dead_process_on_this_host(
    db_url: str,
) -> None:
    import socket

    from docket.runner.batches import owner_is_dead

    store = _store_with_job(db_url)
    dead = f"{socket.gethostname()}:{_dead_pid()}:0123abcd"
    elsewhere = f"another-host-{socket.gethostname()}:1:0123abcd"
    assert owner_is_dead(dead) and not owner_is_dead(elsewhere)
    _lease(store, dead, [p.key for p in PAIRS[:2]])  # a crashed run's hour-long leases
    _lease(store, elsewhere, [PAIRS[2].key])  # a live worker on another machine
    judge = KeywordJudge()
    outcome = asyncio.run(judge_pairs(store, "j", PAIRS, judge, concurrency=4))
    assert sorted(judge.calls) == ["d1", "d2", "d4"]  # the dead one's pairs, not the other's
    assert (outcome.judged, outcome.busy) == (3, 1)


def test_the_leases_of_a_live_process_on_this_host_wait(db_url: str) -> None:
    import os
    import socket

    store = _store_with_job(db_url)
    alive = f"{socket.gethostname()}:{os.getppid()}:0123abcd"  # the test runner's parent
    _lease(store, alive, [PAIRS[0].key])
    judge = KeywordJudge()
    outcome = asyncio.run(judge_pairs(store, "j", PAIRS, judge, concurrency=4))
    assert "d1" not in judge.calls and outcome.busy == 1


def test_an_escalation_is_queued_in_the_transaction_that_saves_it(db_url: str) -> None:
    from docket.review.models import ReviewTask

    store = _store_with_job(db_url)
    _run_then_cancel(store, _StuckOnD3(escalate={"d1", "d4"}))
    with store.session() as session:
        escalated = {r.docid for r in load_judgments(session, "j") if r.decided_by == "escalated"}
        tasks = {t.item_key for t in session.query(ReviewTask).filter_by(job="j")}
    assert escalated == {"d1", "d4"}
    assert tasks == {"q1\td1", "q2\td4"}  # every saved escalation already has its review task
