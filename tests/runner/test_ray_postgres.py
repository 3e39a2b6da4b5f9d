"""Ray actors that write to PostgreSQL themselves: same judgments, calls paid once, faults."""

from __future__ import annotations

import asyncio
import json
import os
import re
from functools import partial
from types import SimpleNamespace

import pytest

from docket.config import Settings
from docket.jobs.compose import make_judge
from docket.relevance import JudgeOptions
from docket.runner import StoredResults, enqueue_escalations, judge_pairs
from docket.store import load_judgments, open_store, upsert_job
from docket.store.claims import DONE, failed_pairs
from docket.store.tables import PairClaim
from tests.pg_helpers import pg_schema_url
from tests.runner.ray_support import (
    PAIRS,
    judge_killing_one_actor,
    judge_with_a_dying_worker,
    reply,
    started_ray,
)
from tests.scripted_server import Reply, serve, user_text

ray = pytest.importorskip("ray")
POSTGRES = pytest.mark.skipif(
    "DOCKET_TEST_POSTGRES_URL" not in os.environ, reason="PostgreSQL not started (make test)"
)


def _debate(body: dict) -> Reply | str:
    """Fact 7 is refused; every fifth fact splits the agents by stance (escalated)."""
    text = user_text(body)
    number = int(text.split("Egg fact number ")[1].split(".")[0])
    if number == 7:
        return Reply(400, {"error": {"message": "context length exceeded"}})
    if number % 5 == 0:
        stance = "relevant" if re.search(r"\bRELEVANT\b", text) else "irrelevant"
        return json.dumps({"label": stance, "evidence": ["S1"], "reasoning": "stance"})
    return reply(body)


def _pg_job(store, name: str, settings: Settings, executor=None):  # type: ignore[no-untyped-def]
    with store.session() as session:
        upsert_job(session, name=name, method="dream", model="m", options={}, source="t")
    judge = make_judge(JudgeOptions.checked(method="dream"), settings)
    tally = asyncio.run(judge_pairs(store, name, PAIRS, judge, concurrency=8, executor=executor))
    queued = enqueue_escalations(store, name, StoredResults(store, name).escalated())
    with store.read_session() as session:
        failed = failed_pairs(session, name)
    return SimpleNamespace(outcome=tally, queued=queued, failed=failed,
                           results=StoredResults(store, name))  # fmt: skip


def _stored(store, job: str) -> list:  # type: ignore[no-untyped-def]
    with store.session() as session:
        records = load_judgments(session, job)
        claims = session.query(PairClaim).filter(PairClaim.job == job).all()
        failed = failed_pairs(session, job)
    judged = sorted((r.docid, r.label, r.decided_by, r.rounds) for r in records)
    return [judged, failed, sorted(c.owner or "" for c in claims if c.failed is None)]


@pytest.fixture(scope="module")
def local_ray():  # type: ignore[no-untyped-def]
    yield from started_ray()


@POSTGRES
def test_actors_write_to_postgres_themselves(local_ray) -> None:  # type: ignore[no-untyped-def]
    from docket.review.models import ReviewTask
    from docket.runner.ray_executor import RayExecutor

    store = open_store(pg_schema_url(os.environ["DOCKET_TEST_POSTGRES_URL"]))
    with serve(_debate) as server:
        settings = Settings(model=server.model(), cache="off")
        local = _pg_job(store, "local", settings)
        local_calls = len(server.requests)
        factory = partial(make_judge, JudgeOptions.checked(method="dream"), settings)
        executor = RayExecutor(factory, workers=2, batch=4)
        try:
            remote = _pg_job(store, "ray", settings, executor)
            again = _pg_job(store, "ray", settings, executor)  # a rerun: nothing to judge
        finally:
            executor.stop()
        ray_calls = len(server.requests) - local_calls
    (judged, failed, owners), (local_judged, local_failed, _) = (
        _stored(store, "ray"),
        _stored(store, "local"),
    )
    assert judged == local_judged and len(judged) == len(PAIRS) - 1
    assert failed == local_failed == [("q1", "d7", failed[0][2])] and "(400)" in failed[0][2]
    assert ray_calls == local_calls  # each call paid once, as on the local executor
    # The judged pairs' calls, as the actors reported them: d7's two refused calls (both
    # agents of round 1) belong to no judgment.
    assert executor.usage.calls == ray_calls - 2 == 2 * 18 + 4 * 5
    # Every claim was taken by a batch of the driver's (owner/n), not by the driver itself.
    assert all(re.fullmatch(r".+/\d+", owner) for owner in owners)
    assert len({owner.rsplit("/", 1)[1] for owner in owners}) == 6  # 23 pairs, 4 a batch
    escalated = [d for d, _, decided, _ in judged if decided == "escalated"]
    assert len(escalated) == 5 and remote.queued == local.queued == 5
    assert again.outcome.judged == 0 and again.queued == 5
    with store.session() as session:
        assert session.query(ReviewTask).filter_by(job="ray").count() == 5  # queued once
    assert len(remote.results) == len(PAIRS) - 1 and remote.failed == failed
    assert (remote.outcome.judged, remote.outcome.failed) == (len(PAIRS) - 1, 1)
    store.close()


@POSTGRES
def test_killing_an_actor_writing_to_postgres_still_completes(local_ray) -> None:  # type: ignore[no-untyped-def]
    store = open_store(pg_schema_url(os.environ["DOCKET_TEST_POSTGRES_URL"]))
    outcome, calls = judge_killing_one_actor(store, kill_after=2)
    with store.session() as session:
        docids = [r.docid for r in load_judgments(session, "j")]
        live = session.query(PairClaim).filter(PairClaim.job == "j", PairClaim.expires_at < DONE)
        assert live.count() == 0  # every claim is a done marker: no lease waits to expire
    assert outcome.error is None and outcome.busy == 0
    assert sorted(docids) == sorted(p.docid for p in PAIRS)  # all judged, none twice
    # A fresh job: every pair was judged by this run, also those the killed actor saved
    # before it died (counted by this run's claims, not as "judged before it").
    assert (outcome.judged, outcome.skipped) == (len(PAIRS), 0)
    # The dead actor's batches in flight were judged again: at most 4 batches of 2 pairs.
    assert 2 * len(PAIRS) <= calls <= 2 * len(PAIRS) + 2 * 8
    store.close()


@POSTGRES
def test_a_batch_whose_worker_always_dies_fails_its_pairs_on_postgres(local_ray, tmp_path) -> None:  # type: ignore[no-untyped-def]
    store = open_store(pg_schema_url(os.environ["DOCKET_TEST_POSTGRES_URL"]))
    outcome, failed, attempts = judge_with_a_dying_worker(store, tmp_path)
    assert attempts == 3  # bounded, not retried forever
    assert [(q, d) for q, d, _ in failed] == [("q1", "d4"), ("q2", "d5")]  # the batch of d5
    assert all("died on each of 3 attempts" in reason for *_, reason in failed)
    assert (outcome.judged, outcome.failed, outcome.busy) == (len(PAIRS) - 2, 2, 0)
    with store.session() as session:
        live = session.query(PairClaim).filter(PairClaim.job == "j", PairClaim.expires_at < DONE)
        assert live.count() == 0  # the dead batch holds no lease
    store.close()


class _Stop(Exception):
    """Stands for Ctrl-C in the driver."""


@POSTGRES
def test_a_stopped_run_frees_its_batches_leases_on_postgres(local_ray) -> None:  # type: ignore[no-untyped-def]
    from docket.runner.ray_executor import RayExecutor

    store = open_store(pg_schema_url(os.environ["DOCKET_TEST_POSTGRES_URL"]))
    with store.session() as session:
        upsert_job(session, name="j", method="dream", model="m", options={}, source="t")
    options = JudgeOptions.checked(method="dream")

    def stop(_pair, _judgment) -> None:  # type: ignore[no-untyped-def]
        raise _Stop

    with serve(reply, delay_s=0.1) as server:
        settings = Settings(model=server.model(), cache="off")
        judge = make_judge(options, settings)
        executor = RayExecutor(partial(make_judge, options, settings), workers=2, batch=2)
        with pytest.raises(_Stop):
            asyncio.run(judge_pairs(store, "j", PAIRS, judge, concurrency=8,
                                      executor=executor, on_result=stop))  # fmt: skip
        assert executor.pending  # batches were still in flight when the driver stopped
        executor.stop()
        with store.session() as session:
            live = session.query(PairClaim).filter(PairClaim.expires_at < DONE).count()
        again = RayExecutor(partial(make_judge, options, settings), workers=2, batch=2)
        try:
            outcome = asyncio.run(
                judge_pairs(store, "j", PAIRS, judge, concurrency=8, executor=again)
            )
        finally:
            again.stop()
    assert live == 0  # no lease left to expire
    assert outcome.busy == 0 and outcome.judged + outcome.skipped == len(PAIRS)
    with store.session() as session:
        assert len(load_judgments(session, "j")) == len(PAIRS)
    store.close()
