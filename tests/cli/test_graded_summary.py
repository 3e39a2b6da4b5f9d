"""A graded single judge's summary shows the grades, not only the labels they give."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from docket.cli.main import main
from docket.llm.fake import register_fake
from tests.jobs.fakes import EXAMPLES


def _grader(request) -> str:  # type: ignore[no-untyped-def]
    """Grade 3 for chunks about eggs, 1 otherwise."""
    user = next(m.content for m in request.messages if m.role == "user")
    chunk = re.search(r"<chunk>\n(.*?)\n</chunk>", user, re.S).group(1)
    grade = 3 if "egg" in chunk.lower() else 1
    return json.dumps({"grade": grade, "evidence": ["S1"], "reasoning": "graded"})


def test_the_summary_of_a_graded_judge_shows_grades(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    model = register_fake("graded-summary", _grader)
    args = ["docket", "judge", str(EXAMPLES), "--method", "single", "--scale", "graded",
            "--model", model, "--db", str(tmp_path / "d.db"), "--cache", "off"]  # fmt: skip
    monkeypatch.setattr(sys, "argv", args)
    monkeypatch.setenv("COLUMNS", "120")
    try:
        main()
    except SystemExit as exit_:
        assert not exit_.code, capsys.readouterr().err
    out = capsys.readouterr().out
    eggs = sum(
        "egg" in json.loads(line)["text"].lower() for line in EXAMPLES.read_text().splitlines()
    )
    assert f"grades: 1: {12 - eggs}, 3: {eggs}" in out, out
    assert re.search(r"\b3 relevant\b", out) and re.search(r"\b1 irrelevant\b", out), out
