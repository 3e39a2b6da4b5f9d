"""README's IR recipe, run line by line as a user would (the model is a registered fake)."""

from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest

from docket.cli.main import main
from tests.test_doc_snippets import RELEVANCE

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- recipe: tested by tests/test_readme_recipe.py -->"


def _recipe() -> list[list[str]]:
    text = (ROOT / "README.md").read_text().split(MARKER, 1)[1]
    block = text.split("```bash\n", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    return [shlex.split(line)[1:] for line in block.splitlines() if line.startswith("docket ")]


def _run(monkeypatch, capsys, args: list[str]) -> str:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["docket", *args])
    with pytest.raises(SystemExit) as caught:
        main()
    captured = capsys.readouterr()
    assert caught.value.code in (0, None), captured.err
    return captured.out + captured.err


def test_the_readme_ir_recipe_runs_and_scores_the_completed_qrels(tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DOCKET_MODEL", RELEVANCE)
    monkeypatch.setenv("DOCKET_CACHE", "off")
    fill, export, systems = _recipe()
    _run(monkeypatch, capsys, fill)
    from_fill = (tmp_path / "completed.qrels").read_text()
    said = _run(monkeypatch, capsys, export)
    assert (tmp_path / "completed.qrels").read_text() == from_fill  # the same file again
    assert "7 original judgments and 6 labels" in said
    report = _run(monkeypatch, capsys, systems)
    assert "warning" not in report and (tmp_path / "scores.txt").exists()

    # the mistake the recipe used to make: new labels only, as completed qrels
    _run(monkeypatch, capsys, ["export", "--job", "ir-demo", "-o", "new-only.qrels"])
    partial = [*systems[: systems.index("--completed-qrels") + 1], "new-only.qrels",
               "--runs", "examples/ir/bm25.trec"]  # fmt: skip
    assert "lacks 7 of the 7 original judgments" in " ".join(
        _run(monkeypatch, capsys, partial).split()
    )
