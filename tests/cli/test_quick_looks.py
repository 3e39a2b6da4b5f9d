"""Quick looks at a big input: --limit, --sample/--seed, --temperature/--seed for the model,
and ``docket review tasks`` (issue 20), through the library and the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.main import app
from docket.errors import ConfigError
from docket.jobs import JobSpec, job_input, run_job, select_input
from docket.llm.fake import register_fake
from docket.llm.types import Request
from docket.review.tasks import list_tasks
from docket.store import load_judgments, open_store

EXAMPLES = Path(__file__).resolve().parent / "pairs12.jsonl"
runner = CliRunner()


def _keys(loaded) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    return [p.key for p in loaded]


def test_limit_keeps_the_first_pairs_and_sample_is_seeded() -> None:
    loaded = job_input(EXAMPLES)
    every = _keys(loaded)
    assert _keys(select_input(loaded, limit=3)) == every[:3]
    first = _keys(select_input(loaded, sample=5, seed=7))
    again = select_input(loaded, sample=5, seed=7)
    assert _keys(again) == first and len(again) == 5
    assert len(set(first)) == 5 and set(first) <= set(every)
    assert first == [k for k in every if k in first]  # input order is kept
    others = {tuple(_keys(select_input(loaded, sample=5, seed=s))) for s in range(8)}
    assert len(others) > 1  # the seed changes the draw
    assert _keys(select_input(again, sample=5, seed=99)) == first  # selecting again: no change
    assert _keys(select_input(loaded, sample=5, limit=2, seed=7)) == first[:2]
    assert select_input(loaded, limit=100) is loaded


def test_limit_below_one_is_refused() -> None:
    with pytest.raises(ConfigError, match="limit must be at least 1"):
        JobSpec.of("single", limit=0)


def _single(request: Request) -> str:
    return json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "scripted"})


def test_run_job_judges_only_the_sample(tmp_path: Path) -> None:
    model = register_fake("quick-single", _single)
    run = run_job(
        EXAMPLES, method="single", model=model, db=str(tmp_path / "d.db"), sample=4, seed=3,
        cache="off",
    )  # fmt: skip
    expected = _keys(select_input(job_input(EXAMPLES), sample=4, seed=3))
    assert sorted(p.key for p, _ in run.results) == sorted(expected)
    assert run.total == 4


def test_cli_limit_and_sample(tmp_path: Path) -> None:
    model = register_fake("quick-cli", _single)
    db = tmp_path / "d.db"
    args = ["judge", str(EXAMPLES), "--method", "single", "--model", model, "--db", str(db)]
    result = runner.invoke(app, [*args, "--job", "lim", "--limit", "2", "--cache", "off"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(
        app, [*args, "--job", "smp", "--sample", "3", "--seed", "5", "--cache", "off"]
    )
    assert result.exit_code == 0, result.output
    with open_store(str(db)).session() as session:
        limited = {(j.qid, j.docid) for j in load_judgments(session, "lim")}
        sampled = {(j.qid, j.docid) for j in load_judgments(session, "smp")}
    assert limited == set(_keys(job_input(EXAMPLES))[:2])
    assert sampled == set(_keys(select_input(job_input(EXAMPLES), sample=3, seed=5)))


def test_seed_reaches_sampled_calls_only(tmp_path: Path) -> None:
    seen: list[int | None] = []

    def script(request: Request) -> str:
        seen.append(request.seed)
        return _single(request)

    model = register_fake("quick-seed", script)
    base = ["judge", str(EXAMPLES), "--method", "single", "--model", model, "--limit", "1"]
    base += ["--db", str(tmp_path / "d.db"), "--cache", "off"]
    assert runner.invoke(app, [*base, "--job", "greedy", "--seed", "9"]).exit_code == 0
    result = runner.invoke(app, [*base, "--job", "hot", "--seed", "9", "--temperature", "0.8"])
    assert result.exit_code == 0, result.output
    assert seen == [None, 9]  # greedy calls send no seed, sampled ones send the run's seed
    assert JobSpec.of("single", temperature=0.8, seed=9).options.record()["seed"] == 9
    assert "seed" not in JobSpec.of("single").options.record()


def test_review_tasks_lists_a_jobs_escalations(tmp_path: Path) -> None:
    def split(request: Request) -> str:
        agent_a = "you are agent A" in request.prompt_text
        label = "relevant" if agent_a else "irrelevant"
        return json.dumps({"label": label, "evidence": ["S1"], "reasoning": "stays put"})

    model = register_fake("quick-split", split)
    db = str(tmp_path / "d.db")
    run = run_job(EXAMPLES, model=model, db=db, job="esc", limit=3, cache="off")
    assert run.queued == 3
    with open_store(db).session() as session:
        rows = list_tasks(session, job="esc", status="open")
        assert list_tasks(session, job="esc", status="done") == []
        assert list_tasks(session, job="other") == []
    assert [r["status"] for r in rows] == ["open"] * 3
    assert [r["reviews"] for r in rows] == [0, 0, 0]
    result = runner.invoke(app, ["review", "tasks", "--db", db, "--job", "esc", "--json"])
    assert result.exit_code == 0, result.output
    listed = [json.loads(line) for line in result.output.splitlines()]
    assert [r["id"] for r in listed] == [r["id"] for r in rows]
    result = runner.invoke(app, ["review", "tasks", "--db", db, "--status", "nope"])
    assert result.exit_code != 0
