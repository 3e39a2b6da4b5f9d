"""Small things of a mature CLI: --version, text printed as written, identifiers never cut."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from docket.cli.main import app
from docket.llm.fake import register_fake
from docket.version import __version__

runner = CliRunner()
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _ok(*args: object) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def test_version() -> None:
    assert _ok("--version").strip() == f"docket {__version__}"


def test_rule_text_with_square_brackets_prints_as_written(tmp_path: Path) -> None:
    text = (EXAMPLES / "sop" / "rules.yaml").read_text()
    text = text.replace(
        "text: A dialogue has between 4 and 12 turns.",
        "text: 'Use a placeholder such as [name] or [date].'",
    )
    rules = tmp_path / "rules.yaml"
    rules.write_text(text)
    output = _ok("rules", "validate", rules)
    assert "[name]" in output and "[date]." in output  # (the cell may wrap between them)


def test_long_docids_and_qids_are_never_cut_at_80_columns(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {
            "qid": f"trec-dl-2021-topic-{q}",
            "query": "what is [this] about",
            "docid": f"msmarco_passage_61_17149294{q}",
            "text": "A [bracketed] passage.",
        }
        for q in range(3)
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows))
    model = register_fake("polish-yes", lambda request: "LABEL: relevant\nREASONING: yes")
    output = _ok("judge", pairs, "--method", "single", "--model", model, "--db", tmp_path / "d.db")
    for row in rows:
        line = next(line for line in output.splitlines() if row["docid"] in line)
        assert row["qid"] in line
    assert all(len(line) <= 80 for line in output.splitlines() if "│" in line)


def _systems_bench(tmp_path: Path, names: list[str]) -> list[str]:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    runs = []
    for i, name in enumerate(names):
        path = tmp_path / f"{name}.trec"
        first, second = ("d1", "d2") if i % 2 else ("d2", "d1")
        path.write_text(f"q1 Q0 {first} 1 2.0 x\nq1 Q0 {second} 2 1.0 x\n")
        runs.append(str(path))
    return ["--qrels", str(qrels), "--runs", *runs]


def test_system_names_are_printed_whole_and_as_written(tmp_path: Path) -> None:
    names = ["bm25[tuned]+monoT5-3b-reranker-run", "splade_pp_ensemble_distil-run-x"]
    output = _ok("eval", "systems", *_systems_bench(tmp_path, names), "--significance")
    for name in names:
        assert sum(name in line for line in output.splitlines()) >= 3
    found = _ok("holes", "find", *_systems_bench(tmp_path, names), "--depth", 2)
    assert all(name in found for name in names)


def test_significance_rows_keep_names_and_p_values_at_80_columns(tmp_path: Path) -> None:
    names = ["bm25[tuned]+monoT5-3b-reranker-run", "splade_pp_ensemble_distil-run-x"]
    output = _ok("eval", "systems", *_systems_bench(tmp_path, names), "--significance")
    lines = output.splitlines()
    first = next(
        i for i, line in enumerate(lines) if names[0] in line and "│" in line and "1.0000" in line
    )
    assert f"vs {names[1]}" in lines[first + 1]  # the pair's second name on the next line
    assert all(len(line) <= 80 for line in lines)
