"""The JSONL export keeps the input's gold label apart, and reading an export back never
turns a job's labels into gold (issue 20)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from docket.cli.main import app
from docket.llm.fake import register_fake
from docket.llm.types import Request
from docket.relevance.pairs_io import read_pairs

runner = CliRunner()


def _always_relevant(request: Request) -> str:
    return json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "scripted"})


def test_export_has_gold_label_and_reading_it_back_keeps_gold(tmp_path: Path) -> None:
    pairs = tmp_path / "gold.jsonl"
    rows = [
        {"qid": "q1", "query": "cats", "docid": "d1", "text": "Cats purr.", "label": 0},
        {"qid": "q1", "query": "cats", "docid": "d2", "text": "Dogs bark.", "label": 1},
        {"qid": "q2", "query": "eggs", "docid": "d3", "text": "Eggs boil."},
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    model = register_fake("export-gold", _always_relevant)
    db = str(tmp_path / "d.db")
    args = ["judge", str(pairs), "--method", "single", "--model", model, "--db", db]
    result = runner.invoke(app, [*args, "--job", "g", "--cache", "off"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "export.jsonl"
    result = runner.invoke(
        app, ["export", "--db", db, "--job", "g", "--format", "jsonl", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    exported = {r["docid"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert {d: (r["gold_label"], r["label"]) for d, r in exported.items()} == {
        "d1": (0, 1),
        "d2": (1, 1),
        "d3": (None, 1),
    }
    again = {p.docid: p for p in read_pairs(out)}
    assert {d: p.label for d, p in again.items()} == {"d1": 0, "d2": 1, "d3": None}
    assert all(p.grade is None for p in again.values())
    assert again["d1"].text == "Cats purr."


def test_a_bad_gold_label_in_an_export_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "export.jsonl"
    row = {"qid": "q", "query": "x", "docid": "d", "text": "t", "label": 1,
           "judged_label": 1, "gold_label": "maybe"}  # fmt: skip
    path.write_text(json.dumps(row) + "\n")
    result = runner.invoke(app, ["judge", str(path), "--model", "fake:never", "--db",
                                 str(tmp_path / "d.db")])  # fmt: skip
    assert result.exit_code != 0
    assert "gold_label" in str(result.exception) or "gold_label" in result.output
