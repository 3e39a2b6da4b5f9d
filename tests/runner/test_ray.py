"""The Ray executor on a local Ray instance, against a scripted chat server on loopback."""

from __future__ import annotations

import asyncio
import json
import re
from functools import partial
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.main import app
from docket.config import Settings
from docket.jobs.compose import make_judge
from docket.relevance import JudgeOptions
from docket.runner import judge_pairs
from docket.store import load_judgments, open_store, upsert_job
from tests.ir.conftest import make_bench
from tests.runner.ray_support import (
    PAIRS,
    judge_killing_one_actor,
    judge_with_a_dying_worker,
    reply,
    started_ray,
)
from tests.scripted_server import Reply, serve, user_text

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():  # type: ignore[no-untyped-def]
    yield from started_ray()


def _run(db: Path, model: str, executor=None) -> list:  # type: ignore[no-untyped-def]
    store = open_store(db)
    with store.session() as session:
        upsert_job(session, name="j", method="dream", model="m", options={}, source="t")
    options = JudgeOptions.checked(method="dream")
    judge = make_judge(options, Settings(model=model, cache="off"))
    outcome = asyncio.run(judge_pairs(store, "j", PAIRS, judge, concurrency=8, executor=executor))
    assert outcome.error is None and outcome.judged + outcome.skipped == len(PAIRS)
    with store.session() as session:
        return [
            (r.docid, r.label, r.decided_by, r.rounds, [t["raw"] for t in r.transcript])
            for r in sorted(load_judgments(session, "j"), key=lambda r: r.docid)
        ]


def test_ray_gives_the_judgments_of_the_local_executor(local_ray, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from docket.runner.ray_executor import RayExecutor

    with serve(reply) as server:
        local = _run(tmp_path / "local.db", server.model())
        local_calls = len(server.requests)
        options = JudgeOptions.checked(method="dream")
        settings = Settings(model=server.model(), cache="off")
        executor = RayExecutor(partial(make_judge, options, settings), workers=2, batch=4)
        try:
            remote = _run(tmp_path / "ray.db", server.model(), executor)
        finally:
            executor.stop()
        ray_calls = len(server.requests) - local_calls
    assert executor.usage.calls == ray_calls  # the actors' calls, counted for the summary
    assert remote == local and len(local) == len(PAIRS)
    assert {label for _, label, *_ in local} == {0, 1}  # both labels occur
    assert ray_calls == local_calls == 2 * len(PAIRS)  # consensus in round 1: two calls a pair


def test_killing_a_worker_mid_job_still_completes(local_ray, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    store = open_store(tmp_path / "kill.db")
    outcome, calls = judge_killing_one_actor(store, kill_after=4)
    with store.session() as session:
        docids = sorted(r.docid for r in load_judgments(session, "j"))
    assert outcome.error is None and docids == sorted(p.docid for p in PAIRS)
    # The dead worker's batches in flight were judged again: at most 4 batches of 2 pairs.
    assert 2 * len(PAIRS) <= calls <= 2 * len(PAIRS) + 2 * 8


def test_a_batch_whose_worker_always_dies_fails_its_pairs_after_3_attempts(  # type: ignore[no-untyped-def]
    local_ray, tmp_path: Path
) -> None:
    from docket.runner.ray_executor import MAX_BATCH_ATTEMPTS

    store = open_store(tmp_path / "dies.db")
    outcome, failed, attempts = judge_with_a_dying_worker(store, tmp_path)
    assert attempts == MAX_BATCH_ATTEMPTS == 3  # bounded, not retried forever
    assert [(q, d) for q, d, _ in failed] == [("q1", "d4"), ("q2", "d5")]  # the batch of d5
    assert all("Ray worker" in reason and "died on each of 3 attempts" in reason
               for *_, reason in failed)  # fmt: skip
    assert (outcome.judged, outcome.failed, outcome.error) == (len(PAIRS) - 2, 2, None)
    with store.session() as session:
        assert len(load_judgments(session, "j")) == len(PAIRS) - 2


def test_a_model_error_in_an_actor_stops_the_job_as_locally(local_ray, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from docket.runner.ray_executor import RayExecutor

    options = JudgeOptions.checked(method="dream")
    errors = []
    with serve(lambda _body: Reply(401, {"error": {"message": "bad key"}})) as server:
        settings = Settings(model=server.model(), cache="off")
        executors = [None, RayExecutor(partial(make_judge, options, settings), batch=4)]
        for number, executor in enumerate(executors):
            store = open_store(tmp_path / f"{number}.db")
            with store.session() as session:
                upsert_job(session, name="j", method="dream", model="m", options={}, source="t")
            judge = make_judge(options, settings)
            try:
                outcome = asyncio.run(
                    judge_pairs(store, "j", PAIRS, judge, concurrency=8, executor=executor)
                )
            finally:
                if executor is not None:
                    executor.stop()
            errors.append(outcome.error)
    local, remote = errors
    # The actor's error itself (with its hint), not Ray's wrapper with a remote traceback.
    assert type(remote) is type(local) and remote.one_line() == local.one_line()
    assert local.hint and "Traceback" not in remote.one_line()


def _zebra(body: dict) -> Reply | str:
    """Holes: relevant iff the chunk mentions zebras; stances split on 'ambiguous'; d9 refused."""
    chunk = body["messages"][-1]["content"].split("<chunk>", 1)[1].split("</chunk>", 1)[0]
    if "Passage d9." in chunk:
        return Reply(400, {"error": {"message": "context length exceeded"}})
    if "Ambiguous" in chunk:
        relevant = bool(re.search(r"\bRELEVANT\b", user_text(body)))
    else:
        relevant = "Zebra" in chunk
    label = "relevant" if relevant else "irrelevant"
    return json.dumps({"label": label, "evidence": ["S1"], "reasoning": "scripted"})


def _fill(bench, folder: Path, model: str, *extra: object) -> tuple[str, str, str]:  # type: ignore[no-untyped-def]
    folder.mkdir()
    args = ["holes", "fill", "--qrels", bench.qrels, "--runs", *bench.runs, "--depth", 3]
    args += ["--corpus", bench.corpus, "--corpus-index", bench.index, "--queries", bench.queries]
    args += ["--model", model, "--cache", "off", "--db", folder / "d.db", "--concurrency", 4]
    args += ["--out-qrels", folder / "c.qrels", "--provenance", folder / "p.jsonl", *extra]
    args += ["--allow-failed"]  # d9 is refused: write the completed qrels without it
    result = CliRunner().invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return (folder / "c.qrels").read_text(), (folder / "p.jsonl").read_text(), result.output


def test_holes_fill_on_ray_matches_local(local_ray, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    bench = make_bench(tmp_path)
    with serve(_zebra) as server:
        local = _fill(bench, tmp_path / "local", server.model())
        local_calls = len(server.requests)
        remote = _fill(bench, tmp_path / "ray", server.model(), "--executor", "ray")
        ray_calls = len(server.requests) - local_calls
    assert remote[0] == local[0]  # the same completed qrels
    assert remote[1] == local[1]  # the same provenance file (records in key order)
    summary = " ".join(remote[2].split())
    assert "judged 4 pairs now; 3 labels added" in summary and "1 escalated pairs wait" in summary
    # q1 and q2 both pool d9, which the server refuses: both are named as failed.
    assert "failed (q1, d9): model" in summary and "(400): context length exceeded" in summary
    assert "failed (q2, d9)" in summary and "2 failed pairs are not judged" in summary
    assert ray_calls == local_calls and local_calls > 0
