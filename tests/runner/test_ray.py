"""The Ray executor on a local Ray instance, against a scripted chat server on loopback."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import signal
from functools import partial
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.executor_flags import make_judge
from docket.cli.main import app
from docket.config import Settings
from docket.relevance import JudgeOptions
from docket.relevance.types import Pair
from docket.runner import judge_job, run_judge_job
from docket.store import load_judgments, open_store, upsert_job
from docket.store.claims import DONE, failed_pairs
from docket.store.tables import PairClaim
from tests.ir.conftest import make_bench
from tests.pg_helpers import pg_schema_url
from tests.scripted_server import Reply, serve, user_text

ray = pytest.importorskip("ray")
ROOT = Path(__file__).resolve().parents[2]
PAIRS = [Pair(f"q{i % 3}", "boil an egg", f"d{i}", f"Egg fact number {i}.") for i in range(24)]


def _reply(body: dict) -> str:
    """Deterministic: the label depends only on the pair's text, so agents agree."""
    text = user_text(body)
    number = int(text.split("Egg fact number ")[1].split(".")[0])
    label = "relevant" if hashlib.sha256(str(number).encode()).digest()[0] % 2 else "irrelevant"
    return json.dumps({"label": label, "evidence": ["S1"], "reasoning": f"fact {number}"})


@pytest.fixture(scope="module")
def local_ray():  # type: ignore[no-untyped-def]
    from docket.runner.ray_executor import init_ray

    env = {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    init_ray(temp_dir=ROOT / ".cache" / "r", num_cpus=2, runtime_env={"env_vars": env})
    yield ray
    ray.shutdown()


def _run(db: Path, model: str, executor=None) -> list:  # type: ignore[no-untyped-def]
    store = open_store(db)
    with store.session() as session:
        upsert_job(session, name="j", method="dream", model="m", options={}, source="t")
    options = JudgeOptions.checked(method="dream")
    judge = make_judge(options, Settings(model=model, cache="off"))
    outcome = asyncio.run(run_judge_job(store, "j", PAIRS, judge, concurrency=8, executor=executor))
    assert outcome.error is None and outcome.judged + outcome.skipped == len(PAIRS)
    with store.session() as session:
        return [
            (r.docid, r.label, r.decided_by, r.rounds, [t["raw"] for t in r.transcript])
            for r in sorted(load_judgments(session, "j"), key=lambda r: r.docid)
        ]


def test_ray_gives_the_judgments_of_the_local_executor(local_ray, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from docket.runner.ray_executor import RayExecutor

    with serve(_reply) as server:
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
    from docket.runner.ray_executor import RayExecutor

    with serve(_reply, delay_s=0.1) as server:
        options = JudgeOptions.checked(method="dream")
        settings = Settings(model=server.model(), cache="off")
        executor = RayExecutor(partial(make_judge, options, settings), workers=2, batch=2)
        victim = ray.get(executor.start()[0].pid.remote())
        store = open_store(tmp_path / "kill.db")
        with store.session() as session:
            upsert_job(session, name="j", method="dream", model="m", options={}, source="t")
        judge = make_judge(options, settings)
        seen: list[str] = []

        def on_result(pair, _judgment) -> None:  # type: ignore[no-untyped-def]
            seen.append(pair.docid)
            if len(seen) == 4:
                os.kill(victim, signal.SIGKILL)

        try:
            outcome = asyncio.run(
                run_judge_job(
                    store, "j", PAIRS, judge, concurrency=8, executor=executor, on_result=on_result
                )  # fmt: skip
            )
            assert ray.get(executor.actors[0].pid.remote()) != victim  # restarted
        finally:
            executor.stop()
        calls = len(server.requests)
    with store.session() as session:
        docids = sorted(r.docid for r in load_judgments(session, "j"))
    assert outcome.error is None and docids == sorted(p.docid for p in PAIRS)
    # The dead worker's batches in flight were judged again: at most 4 batches of 2 pairs.
    assert 2 * len(PAIRS) <= calls <= 2 * len(PAIRS) + 2 * 8


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
                    run_judge_job(store, "j", PAIRS, judge, concurrency=8, executor=executor)
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
    # The same provenance records (written in the order the pairs finished).
    assert sorted(remote[1].splitlines()) == sorted(local[1].splitlines())
    summary = " ".join(remote[2].split())
    assert "judged 4 pairs now; 3 labels added" in summary and "1 escalated pairs wait" in summary
    # q1 and q2 both pool d9, which the server refuses: both are named as failed.
    assert "failed (q1, d9): model" in summary and "(400): context length exceeded" in summary
    assert "failed (q2, d9)" in summary and "2 failed pairs are not judged" in summary
    assert ray_calls == local_calls and local_calls > 0


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
    return _reply(body)


def _pg_job(store, name: str, settings: Settings, executor=None):  # type: ignore[no-untyped-def]
    with store.session() as session:
        upsert_job(session, name=name, method="dream", model="m", options={}, source="t")
    judge = make_judge(JudgeOptions.checked(method="dream"), settings)
    return judge_job(store, name, PAIRS, judge, concurrency=8, executor=executor)


def _stored(store, job: str) -> list:  # type: ignore[no-untyped-def]
    with store.session() as session:
        records = load_judgments(session, job)
        claims = session.query(PairClaim).filter(PairClaim.job == job).all()
        failed = failed_pairs(session, job)
    judged = sorted((r.docid, r.label, r.decided_by, r.rounds) for r in records)
    return [judged, failed, sorted(c.owner or "" for c in claims if c.failed is None)]


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
    from docket.runner.ray_executor import RayExecutor

    store = open_store(pg_schema_url(os.environ["DOCKET_TEST_POSTGRES_URL"]))
    with store.session() as session:
        upsert_job(session, name="j", method="dream", model="m", options={}, source="t")
    with serve(_reply, delay_s=0.1) as server:
        settings = Settings(model=server.model(), cache="off")
        options = JudgeOptions.checked(method="dream")
        executor = RayExecutor(partial(make_judge, options, settings), workers=2, batch=2)
        victim = ray.get(executor.start()[0].pid.remote())
        seen: list[str] = []

        def on_result(pair, _judgment) -> None:  # type: ignore[no-untyped-def]
            seen.append(pair.docid)
            if len(seen) == 2:
                os.kill(victim, signal.SIGKILL)

        judge = make_judge(options, settings)
        try:
            outcome = asyncio.run(
                run_judge_job(
                    store, "j", PAIRS, judge, concurrency=8, executor=executor, on_result=on_result
                )  # fmt: skip
            )
            assert ray.get(executor.actors[0].pid.remote()) != victim  # restarted
        finally:
            executor.stop()
        calls = len(server.requests)
    with store.session() as session:
        docids = [r.docid for r in load_judgments(session, "j")]
        live = session.query(PairClaim).filter(PairClaim.job == "j", PairClaim.expires_at < DONE)
        assert live.count() == 0  # every claim is a done marker: no lease waits to expire
    assert outcome.error is None and outcome.busy == 0
    assert sorted(docids) == sorted(p.docid for p in PAIRS)  # all judged, none twice
    # The dead actor's batches in flight were judged again: at most 4 batches of 2 pairs.
    assert 2 * len(PAIRS) <= calls <= 2 * len(PAIRS) + 2 * 8
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

    with serve(_reply, delay_s=0.1) as server:
        settings = Settings(model=server.model(), cache="off")
        judge = make_judge(options, settings)
        executor = RayExecutor(partial(make_judge, options, settings), workers=2, batch=2)
        with pytest.raises(_Stop):
            asyncio.run(run_judge_job(store, "j", PAIRS, judge, concurrency=8,
                                      executor=executor, on_result=stop))  # fmt: skip
        assert executor.pending  # batches were still in flight when the driver stopped
        executor.stop()
        with store.session() as session:
            live = session.query(PairClaim).filter(PairClaim.expires_at < DONE).count()
        again = RayExecutor(partial(make_judge, options, settings), workers=2, batch=2)
        try:
            outcome = asyncio.run(
                run_judge_job(store, "j", PAIRS, judge, concurrency=8, executor=again)
            )
        finally:
            again.stop()
    assert live == 0  # no lease left to expire
    assert outcome.busy == 0 and outcome.judged + outcome.skipped == len(PAIRS)
    with store.session() as session:
        assert len(load_judgments(session, "j")) == len(PAIRS)
    store.close()
