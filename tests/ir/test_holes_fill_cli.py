"""``holes fill`` and ``holes simulate`` through the CLI: judge options, store, summaries."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.main import app, main
from docket.errors import RequestRefusedError
from docket.llm.fake import register_fake
from docket.llm.types import Request
from docket.review.auth import add_reviewer
from docket.review.models import ReviewTask
from docket.review.queue import record_decision
from docket.store import load_judgments, open_store
from docket.store.tables import Job

runner = CliRunner()
CALLS = {"n": 0}


def _zebra(request: Request) -> str:
    """Relevant iff the chunk mentions zebras; 'ambiguous' chunks split by stance."""
    CALLS["n"] += 1
    prompt = request.prompt_text
    chunk = prompt.split("<chunk>", 1)[1].split("</chunk>", 1)[0].lower()
    if "ambiguous" in chunk:
        relevant = bool(re.search(r"\bRELEVANT\b", prompt))
    else:
        relevant = "zebra" in chunk
    label = "relevant" if relevant else "irrelevant"
    return f"LABEL: {label}\nEVIDENCE: S1\nREASONING: the chunk is {label}."


MODEL = register_fake("holes-zebra", _zebra)


def _fill(bench, tmp_path: Path, *extra: object, code: int = 0):  # type: ignore[no-untyped-def]
    args = ["holes", "fill", "--qrels", bench.qrels, "--runs", *bench.runs, "--depth", 3]
    args += ["--corpus", bench.corpus, "--corpus-index", bench.index, "--queries", bench.queries]
    args += ["--model", MODEL, "--cache", "off", "--db", tmp_path / "d.db"]
    args += ["--out-qrels", tmp_path / "c.qrels", "--provenance", tmp_path / "p.jsonl", *extra]
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == code, result.output
    return " ".join(result.output.split())


def test_summary_agrees_with_itself_after_decisions_and_on_a_rerun(bench, tmp_path: Path) -> None:
    first = _fill(bench, tmp_path)
    assert "judged 6 pairs now; 5 labels added" in first
    assert "1 escalated-pending" in first and "1 escalated pairs wait" in first
    assert f"docket review serve --db {tmp_path / 'd.db'}" in first
    store = open_store(tmp_path / "d.db")
    with store.session() as session:
        add_reviewer(session, "ana")
        task = session.query(ReviewTask).filter_by(item_key="q2\td6").one()
        record_decision(session, task.id, "ana", 1)
    calls = CALLS["n"]
    again = _fill(bench, tmp_path)
    assert CALLS["n"] == calls  # nothing judged again
    assert "judged 0 pairs now, 6 already in the store; 6 labels added" in again
    assert "1 human" in again and "escalated-pending" not in again and "wait" not in again


def test_ablation_options_and_reviews_reach_the_judge(bench, tmp_path: Path) -> None:
    _fill(
        bench, tmp_path, "--agents", 3, "--stances", "swapped", "--reviews", 2,
        "--agent-model", MODEL, "--agent-model", MODEL, "--agent-model", MODEL, "--job", "abl",
    )  # fmt: skip
    store = open_store(tmp_path / "d.db")
    with store.session() as session:
        options = session.get(Job, "abl").options
        records = load_judgments(session, "abl")
        tasks = session.query(ReviewTask).filter_by(job="abl").all()
    assert (options["agents"], options["stances"], options["agent_models"]) == (
        3,
        "swapped",
        [MODEL] * 3,
    )
    first_round = [t for t in records[0].transcript if t.get("round") == 1]
    assert len(first_round) == 3
    assert tasks and all(t.required_reviews == 2 for t in tasks)


def _main(monkeypatch, capsys, *args: object) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["docket", *map(str, args)])
    with pytest.raises(SystemExit) as caught:
        main()
    return caught.value.code, capsys.readouterr().err.strip()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--method", "single", "--rounds", 3), "--rounds does not apply to --method single"),
        (("--method", "single", "--agents", 3), "--agents does not apply to --method single"),
        (("--method", "majority", "--stances", "neutral"), "--stances does not apply"),
    ],
)
def test_fill_refuses_options_of_other_methods(
    bench, tmp_path, monkeypatch, capsys, extra, message
) -> None:  # type: ignore[no-untyped-def]
    args = [
        "holes",
        "fill",
        "--qrels",
        bench.qrels,
        "--runs",
        *bench.runs,
        "--corpus",
        bench.corpus,
    ]
    args += [
        "--queries",
        bench.queries,
        "--out-qrels",
        tmp_path / "c",
        "--provenance",
        tmp_path / "p",
    ]
    code, err = _main(monkeypatch, capsys, *args, "--model", MODEL, *extra)
    assert code == 2 and message in err and "\n" not in err
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (("--method", "dream", "--scale", "graded"), "--scale does not apply to --method dream"),
        (("--method", "single", "--rounds", 3), "--rounds does not apply to --method single"),
        (("--method", "lara", "--samples", 3), "--samples does not apply to --method lara"),
        (
            ("--method", "dream", "--lara-budget", 0.2),
            "--lara-budget does not apply to --method dream",
        ),
    ],
)
def test_judge_refuses_options_of_other_methods(
    tmp_path, monkeypatch, capsys, extra, message
) -> None:  # type: ignore[no-untyped-def]
    pairs = Path(__file__).resolve().parents[2] / "examples" / "pairs.jsonl"
    code, err = _main(
        monkeypatch, capsys, "judge", pairs, "--model", MODEL, "--db", tmp_path / "d.db", *extra
    )
    assert code == 2 and message in err and "\n" not in err
    assert not (tmp_path / "d.db").exists()


def test_simulate_stores_its_judgments_and_resumes(bench, tmp_path: Path) -> None:
    args = ["holes", "simulate", "--qrels", bench.qrels, "--runs", *bench.runs, "--fraction", 1.0]
    args += ["--corpus", bench.corpus, "--corpus-index", bench.index, "--queries", bench.queries]
    args += ["--model", MODEL, "--cache", "off", "--db", tmp_path / "s.db", "--measure", "P@3"]
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    assert "dropped 5 judged pairs" in result.output and "simulate-qrels-dream-0" in result.output
    with open_store(tmp_path / "s.db").session() as session:
        records = load_judgments(session, "simulate-qrels-dream-0")
    assert len(records) == 5 and all(r.gold is not None for r in records)
    calls = CALLS["n"]
    again = runner.invoke(app, [str(a) for a in args])
    assert again.exit_code == 0 and CALLS["n"] == calls
    lines = result.output.splitlines()  # the first run also ends with its plan vs actual
    table = next(i for i, line in enumerate(lines) if "planned vs actual" in line) - 1
    assert again.output.splitlines()[-3:] == lines[:table][-3:]


def _refuse_d9(request: Request) -> str:
    """As ``_zebra``, but the server refuses the pairs of document d9 (context too long)."""
    if "Passage d9." in request.prompt_text and not REFUSALS["fixed"]:
        raise RequestRefusedError("context length exceeded")
    return _zebra(request)


REFUSALS = {"fixed": False}
REFUSING = register_fake("holes-refuse-d9", _refuse_d9)


def test_fill_names_refused_pairs_and_retries_them_when_asked(bench, tmp_path: Path) -> None:
    args = ["--model", REFUSING, "--job", "refused"]
    first = _fill(bench, tmp_path, *args, code=3)  # failed pairs: exit 3, nothing written
    # q1 and q2 both pool d9: each is named with the reason, and not judged.
    assert "failed (q1, d9): context length exceeded" in first
    assert "failed (q2, d9)" in first and "2 failed pairs are not judged" in first
    assert "judged 4 pairs now" in first and "not written" in first
    assert not (tmp_path / "c.qrels").exists() and not (tmp_path / "p.jsonl").exists()
    again = _fill(bench, tmp_path, *args, "--allow-failed")  # a plain rerun leaves them failed
    assert "judged 0 pairs now" in again and "2 failed pairs are not judged" in again
    assert "labels added to" in again and (tmp_path / "c.qrels").exists()  # written without d9
    assert " d9 " not in (tmp_path / "c.qrels").read_text()
    REFUSALS["fixed"] = True
    try:
        retried = _fill(bench, tmp_path, *args, "--retry-failed")
    finally:
        REFUSALS["fixed"] = False
    assert "judged 2 pairs now, 4 already in the store" in retried and "failed" not in retried


def test_fill_against_a_dead_server_exits_2_and_writes_nothing(  # type: ignore[no-untyped-def]
    bench, tmp_path: Path, monkeypatch, capsys
) -> None:
    """Nothing listens on the port: the job stops, and no partial file passes as completed."""
    import socket

    with socket.socket() as probe:  # a free port, closed again: connections are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = ["holes", "fill", "--qrels", bench.qrels, "--runs", *bench.runs, "--depth", 3]
    args += ["--corpus", bench.corpus, "--corpus-index", bench.index, "--queries", bench.queries]
    args += ["--model", f"openai-compatible:http://127.0.0.1:{port}/v1#m", "--cache", "off"]
    args += ["--out-qrels", tmp_path / "c.qrels", "--provenance", tmp_path / "p.jsonl"]
    args += ["--db", tmp_path / "d.db", "--max-retries", 0]
    code, err = _main(monkeypatch, capsys, *args)
    output = " ".join(err.split())
    assert code == 2 and "stopped early" in output and "not written" in output
    assert "run the same command again to finish" in output
    assert not (tmp_path / "c.qrels").exists() and not (tmp_path / "p.jsonl").exists()


def test_fill_limit_takes_the_best_ranked_holes_across_queries(bench, tmp_path: Path) -> None:
    from docket.ir.formats import read_qrels, read_runs
    from docket.ir.holes import find_holes

    holes = find_holes(read_qrels(bench.qrels), read_runs(bench.runs), 3)
    ranked = holes.by_pool_rank()
    assert len({hole.qid for hole in holes.holes}) > 1  # holes in several queries
    first_query = [(h.qid, h.docid) for h in holes.holes if h.qid == holes.holes[0].qid]
    limit = len(first_query)  # the old order took exactly these: one query's holes
    assert [h.best_rank for h in ranked] == sorted(h.best_rank for h in ranked)
    _fill(bench, tmp_path, "--limit", limit, "--job", "lim")
    with open_store(tmp_path / "d.db").session() as session:
        judged = {(r.qid, r.docid) for r in load_judgments(session, "lim")}
    assert judged == {(h.qid, h.docid) for h in ranked[:limit]}
    assert len({qid for qid, _ in judged}) > 1 and judged != set(first_query)


def test_simulate_against_a_dead_server_exits_2(  # type: ignore[no-untyped-def]
    bench, tmp_path: Path, monkeypatch, capsys
) -> None:
    """It printed its report and exited 0; now it stops with the model's one line."""
    import socket

    with socket.socket() as probe:  # a free port, closed again: connections are refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    args = ["holes", "simulate", "--qrels", bench.qrels, "--runs", *bench.runs]
    args += ["--corpus", bench.corpus, "--corpus-index", bench.index, "--queries", bench.queries]
    args += ["--model", f"openai-compatible:http://127.0.0.1:{port}/v1#m", "--cache", "off"]
    args += ["--db", tmp_path / "s.db", "--max-retries", 0, "--fraction", 1.0]
    code, err = _main(monkeypatch, capsys, *args)
    assert code == 2 and "stopped early" in err and "Traceback" not in err


def test_whole_pool_writes_both_completions(bench, tmp_path: Path) -> None:
    output = _fill(bench, tmp_path, "--whole-pool", tmp_path / "whole.qrels", "--method", "single")
    written = (tmp_path / "whole.qrels").read_text().splitlines()
    assert f"whole pool: {len(written)} new labels written" in output
    keys = {tuple(line.split()[0:3:2]) for line in written}
    assert ("q1", "d1") in keys and ("q1", "d7") in keys  # judged and unjudged pooled pairs
