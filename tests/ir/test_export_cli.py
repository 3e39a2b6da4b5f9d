"""``docket export`` through the CLI: grades, rel level, trec_eval order, undecided pairs, umask."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import ir_measures
import pytest
from typer.testing import CliRunner

from docket.cli.main import app
from docket.llm.fake import register_fake
from docket.llm.types import Request
from docket.review.auth import add_reviewer
from docket.review.models import ReviewTask
from docket.review.queue import record_decision
from docket.store import open_store

runner = CliRunner()
# Input order differs from trec_eval's (qid then docid, by bytes): q10 < q2, D1 < d10 < d9.
PAIRS = [("q2", "d9"), ("q2", "d10"), ("q10", "d3"), ("q2", "D1"), ("q10", "d0")]
GRADES = {"d9": 3, "d10": 2, "d3": 1, "D1": 0, "d0": 2}


def _grader(request: Request) -> str:
    docid = re.search(r"\b([dD]\d+) says hello", request.prompt_text).group(1)
    return f"M: 1\nT: 1\n##final score: {GRADES[docid]}"


def _stubborn(request: Request) -> str:
    """Agent A says relevant, B irrelevant: every debate escalates."""
    label = "relevant" if "you are agent A" in request.prompt_text else "irrelevant"
    return f"LABEL: {label}\nEVIDENCE: S1\nREASONING: scripted"


GRADER = register_fake("export-grader", _grader)
STUBBORN = register_fake("export-stubborn", _stubborn)


def _pairs(path: Path) -> Path:
    lines = [
        json.dumps({"qid": q, "query": f"query [{q}]", "docid": d, "text": f"{d} says hello."})
        for q, d in PAIRS
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _run(*args: object) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def graded(tmp_path: Path) -> Path:
    db = tmp_path / "g.db"
    pairs = _pairs(tmp_path / "pairs.jsonl")
    _run(
        "judge", pairs, "--method", "single", "--scale", "graded", "--model", GRADER,
        "--db", db, "--job", "g",
    )  # fmt: skip
    return db


def _export(db: Path, out: Path, *extra: object) -> str:
    return _run("export", "--job", "g", "--db", db, "-o", out, *extra)


def test_grades_are_kept_in_trec_eval_order_and_round_trip(graded: Path, tmp_path: Path) -> None:
    out = tmp_path / "graded.qrels"
    _export(graded, out)
    assert out.read_text().splitlines() == [
        "q10 0 d0 2",
        "q10 0 d3 1",
        "q2 0 D1 0",
        "q2 0 d10 2",
        "q2 0 d9 3",
    ]
    expected = {("q2", "d9"): 3, ("q2", "d10"): 2, ("q10", "d3"): 1, ("q2", "D1"): 0}
    expected[("q10", "d0")] = 2
    read = {(q.query_id, q.doc_id): q.relevance for q in ir_measures.read_trec_qrels(str(out))}
    assert read == expected


def test_binary_grades_use_the_rel_level(graded: Path, tmp_path: Path) -> None:
    binary, dl = tmp_path / "binary.qrels", tmp_path / "dl.qrels"
    _export(graded, binary, "--grades", "binary")
    _export(graded, dl, "--grades", "binary", "--rel-level", 2)
    # The graded judge binarises at grade >= 2 (TREC DL).
    assert [line.split()[3] for line in binary.read_text().splitlines()] == list("10011")
    assert [line.split()[3] for line in dl.read_text().splitlines()] == list("20022")


def test_bad_grades_option_is_refused(graded: Path, tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["export", "--job", "g", "--db", str(graded), "-o", str(tmp_path / "x"), "--grades", "all"],
    )
    assert result.exit_code != 0 and "keep or binary" in str(result.exception)
    assert not (tmp_path / "x").exists()


def _escalated_job(tmp_path: Path) -> Path:
    db = tmp_path / "e.db"
    _run("judge", _pairs(tmp_path / "p.jsonl"), "--model", STUBBORN, "--db", db, "--job", "g")
    return db


def test_undecided_pairs_are_counted_and_written_on_request(tmp_path: Path) -> None:
    db = _escalated_job(tmp_path)
    store = open_store(db)
    with store.session() as session:
        add_reviewer(session, "ana")
        task = session.query(ReviewTask).filter_by(item_key="q2\td9").one()
        record_decision(session, task.id, "ana", 1, grade=3, seconds=12.5)
    qrels, pending = tmp_path / "r.qrels", tmp_path / "pending.tsv"
    output = _export(db, qrels)
    assert "4 escalated pairs without a decision are not in the qrels" in output
    output = _export(db, qrels, "--undecided", pending)
    assert f"4 escalated pairs without a decision written to {pending}" in output.replace("\n", "")
    assert qrels.read_text() == "q2 0 d9 3\n"
    assert pending.read_text().splitlines() == ["q10\td0", "q10\td3", "q2\tD1", "q2\td10"]


def test_jsonl_has_texts_timestamps_and_reviewers(tmp_path: Path) -> None:
    db = _escalated_job(tmp_path)
    store = open_store(db)
    with store.session() as session:
        ana = add_reviewer(session, "ana")[0]
        task = session.query(ReviewTask).filter_by(item_key="q10\td3").one()
        record_decision(session, task.id, "ana", 0, seconds=7.0)
        ana_id = ana.id
    out = tmp_path / "all.jsonl"
    _export(db, out, "--format", "jsonl")
    rows = {r["docid"]: r for r in map(json.loads, out.read_text().splitlines())}
    d3 = rows["d3"]
    assert (d3["query"], d3["text"]) == ("query [q10]", "d3 says hello.")
    assert (d3["label"], d3["relevance"], d3["source"], d3["judged_label"]) == (0, 0, "human", None)
    assert d3["judged_at"] and d3["updated_at"]
    [review] = d3["reviews"]
    assert (review["reviewer"], review["reviewer_id"], review["seconds"]) == ("ana", ana_id, 7.0)
    assert review["decided_at"].startswith(d3["judged_at"][:4])
    assert rows["d9"]["reviews"] == [] and rows["d9"]["label"] is None


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o077, 0o600)])
def test_exported_files_respect_the_umask(
    graded: Path, tmp_path: Path, mask: int, mode: int
) -> None:
    old = os.umask(mask)
    try:
        out = tmp_path / "u.qrels"
        _export(graded, out)
    finally:
        os.umask(old)
    assert stat.S_IMODE(out.stat().st_mode) == mode
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".u.qrels")] == []
