"""``docket jobs``: every job of a store, with its counts, review progress, spend and dates."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from docket.cli.main import main
from docket.jobs.listing import list_jobs
from docket.llm.fake import register_fake
from docket.store import open_store
from tests.jobs.fakes import AGREE, EXAMPLES, Counting

SPLIT = json.dumps({"label": "irrelevant", "evidence": ["S1"], "reasoning": "off topic"})


def _main(monkeypatch, capsys, *args: object) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["docket", *map(str, args)])
    with pytest.raises(SystemExit) as caught:
        main()
    captured = capsys.readouterr()
    return caught.value.code or 0, captured.out, captured.err


def _stubborn(request) -> str:  # type: ignore[no-untyped-def]
    """Agent A says relevant, B irrelevant: every debate is escalated."""
    user = next(m.content for m in request.messages if m.role == "user")
    return AGREE if "you are agent A" in user else SPLIT


def test_jobs_lists_every_job_with_counts(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "d.db"
    agree, split = register_fake("jobs-agree", Counting()), register_fake("jobs-split", _stubborn)
    runs = (("first", agree, ["--method", "single"]),
            ("second", split, ["--method", "dream", "--rounds", "1"]))  # fmt: skip
    for job, model, method in runs:
        code, _, err = _main(monkeypatch, capsys, "judge", EXAMPLES, "--model", model, *method,
                             "--db", db, "--job", job, "--cache", "off")  # fmt: skip
        assert code in (0, None), err
    code, out, err = _main(monkeypatch, capsys, "jobs", "--db", db, "--json")
    assert code == 0, err
    listed = {row["name"]: row for row in json.loads(out)}
    assert set(listed) == {"first", "second"}
    first, second = listed["first"], listed["second"]
    assert (first["method"], first["judged"], first["escalated"]) == ("single", 12, 0)
    assert (second["method"], second["judged"], second["escalated"]) == ("dream", 12, 12)
    assert second["review_tasks"] == 12 and second["reviewed"] == 0
    assert first["calls"] == 12 and second["calls"] == 24 and first["failed"] == 0
    assert first["created"] and first["last_judged"]
    code, out, _ = _main(monkeypatch, capsys, "jobs", "--db", db)
    assert code == 0 and "first" in out and "second" in out and "0/12" in out


def test_jobs_on_an_empty_store_and_from_python(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "empty.db"
    open_store(db).close()
    assert list_jobs(open_store(db)) == []
    code, out, _ = _main(monkeypatch, capsys, "jobs", "--db", db)
    assert code == 0 and "no jobs in" in out


def test_an_unknown_job_points_to_docket_jobs(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "d.db"
    open_store(db).close()
    code, _, err = _main(monkeypatch, capsys, "export", "--job", "nope", "--db", db, "-o",
                         tmp_path / "x.qrels")  # fmt: skip
    assert code == 2 and "docket jobs" in err and "docket summary" not in err
