"""docs/benchmarks.md is generated from benchmarks/results/*.json and never stale."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load(name: str, path: Path):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_benchmarks_page_matches_the_stored_results() -> None:
    doc = _load("benchmarks_doc", ROOT / "scripts" / "benchmarks_doc.py")
    expected = doc.render()
    current = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert current == expected, "docs/benchmarks.md is stale: run python scripts/benchmarks_doc.py"
    for result in (ROOT / "benchmarks" / "results").glob("*.json"):
        assert f"`{result.name}`" in current


def test_one_table_printer_aligns_numbers_and_renders_markdown() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        table_module = _load("_table", ROOT / "benchmarks" / "_table.py")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    table = table_module.dict_table(
        [{"run": "a", "pairs_per_s": 1234.5, "share": 0.91234}, {"run": "bb", "pairs_per_s": 7.0}],
        title="runs",
    )
    text = table_module.render(table).splitlines()
    assert text[0] == "runs"
    assert text[1].split() == ["run", "pairs_per_s", "share"]
    assert text[3] == "a          1,234  0.912"  # numbers right-aligned under their heading
    assert text[4] == "bb             7      –"
    md = table_module.markdown(table).splitlines()
    assert md[2:4] == ["| run | pairs_per_s | share |", "|---|---:|---:|"]


def test_no_benchmark_script_keeps_its_own_table_printer() -> None:
    aligned = re.compile(r"print\(f\".*\{[^}]*:[<>]\d")  # print(f"{name:<24}...")
    for script in (ROOT / "benchmarks").glob("[a-z]*.py"):
        text = script.read_text(encoding="utf-8")
        assert "def print_table" not in text, script.name
        assert ".ljust(" not in text and not aligned.search(text), script.name
        if "results" in text and "RESULTS" in text or 'results" /' in text:
            assert "def tables(" in text, f"{script.name} writes results without tables()"
