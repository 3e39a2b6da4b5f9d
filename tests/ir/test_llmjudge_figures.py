"""``docket eval labels`` reproduces the LLMJudge figures on the real challenge data.

Data: ``../shared/data/llmjudge/`` (4,423 human-labelled pairs, 33 released label files).
The figures are those of the LLMJudge overview (Rahmani et al. 2025, "Judging the Judges",
arXiv 2502.13908, Tables 3-4): Cohen's kappa over the four grades and after binarising at
grade >= 1, 2 and 3, labels clipped to 0..3 first.

Each figure is computed twice: by the command, and here from the files with a few lines
of plain numpy (no docket statistics code, no sklearn). Then both are held against:

* PUBLISHED: values of the paper's tables as transcribed by two public third-party
  reproductions (four files' four-grade kappa, and the best value of each column with
  the file that has it). The paper itself was not available to us; these are the
  transcriptions, not a reading of the PDF.
* ORGANISERS_ALPHA: ordinal Krippendorff's alpha of the output stored in the
  organisers' own analysis notebook (LLMJudge-benchmark repository, computed with the
  ``krippendorff`` package on the clipped labels with value domain 0..3).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from docket.cli.main import app
from tests.conftest import SHARED_DATA

FILES = ["willia-umbrela1", "Olz-gpt4o", "h2oloo-fewself", "willia-umbrela3",
         "RMITIR-llama70B", "h2oloo-zeroshot2"]  # fmt: skip
PUBLISHED_KAPPA = {"willia-umbrela1": 0.2863, "Olz-gpt4o": 0.2625,
                   "TREMA-4prompts": 0.1829, "prophet-setting2": 0.1757}  # fmt: skip
PUBLISHED_BEST = {  # column: (file, value)
    "kappa": ("willia-umbrela1", 0.2863),
    ">=1": ("Olz-gpt4o", 0.4228),
    ">=2": ("h2oloo-fewself", 0.4280),
    ">=3": ("willia-umbrela3", 0.3215),
}
ORGANISERS_ALPHA = {"willia-umbrela1": 0.491793, "h2oloo-fewself": 0.495764,
                    "h2oloo-zeroshot2": 0.389818, "TREMA-rubric0": 0.103604}  # fmt: skip


LLMJUDGE = SHARED_DATA / "llmjudge"


@pytest.fixture(scope="module")
def report() -> dict:
    labels = sorted((LLMJUDGE / "submissions").glob("*.txt"))
    result = CliRunner().invoke(
        app,
        ["eval", "labels", str(LLMJUDGE / "human_qrels.txt"), *map(str, labels), "--clip", "0:3",
         "--format", "json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return {r["name"]: r for r in json.loads(result.stdout)["results"]}


def _clipped(path: Path) -> dict[tuple[str, str], int]:
    labels = {}
    for line in path.read_text().splitlines():
        qid, _, docid, grade = line.split()
        labels[(qid, docid)] = min(3, max(0, int(grade)))
    return labels


def _kappa(a: np.ndarray, b: np.ndarray, k: int) -> float:
    table = np.zeros((k, k))
    np.add.at(table, (a, b), 1)
    p = table / table.sum()
    p_o, p_e = np.trace(p), p.sum(axis=1) @ p.sum(axis=0)
    return float((p_o - p_e) / (1 - p_e))


def _independent(name: str) -> dict[str, float]:
    gold = _clipped(LLMJUDGE / "human_qrels.txt")
    labels = _clipped(LLMJUDGE / "submissions" / f"{name}.txt")
    keys = sorted(gold)
    a, b = np.array([gold[k] for k in keys]), np.array([labels[k] for k in keys])
    figures = {"kappa": _kappa(a, b, 4)}
    for t in (1, 2, 3):
        figures[f">={t}"] = _kappa((a >= t).astype(int), (b >= t).astype(int), 2)
    return figures


def _command(result: dict) -> dict[str, float]:
    return {
        "kappa": result["kappa"],
        **{f">={t}": result["binary_kappa"][str(t)] for t in (1, 2, 3)},
    }


@pytest.mark.parametrize("name", FILES)
def test_command_equals_an_independent_computation(report: dict, name: str) -> None:
    assert report[name]["joined"] == 4423
    assert _command(report[name]) == pytest.approx(_independent(name), abs=1e-12)


def test_out_of_scale_labels_were_clipped(report: dict) -> None:
    assert report["RMITIR-llama70B"]["clipped"] == 2  # two 5s
    assert report["h2oloo-zeroshot2"]["clipped"] == 1  # one 10
    assert sum(r["clipped"] for r in report.values()) == 3


@pytest.mark.parametrize("name", sorted(PUBLISHED_KAPPA))
def test_four_grade_kappa_as_published(report: dict, name: str) -> None:
    assert round(report[name]["kappa"], 4) == PUBLISHED_KAPPA[name]


def test_best_of_each_column_as_published(report: dict) -> None:
    assert len(report) == 33
    for column, (name, value) in PUBLISHED_BEST.items():
        values = {n: _command(r)[column] for n, r in report.items()}
        best = max(values, key=values.__getitem__)
        assert (best, round(values[best], 4)) == (name, value)


@pytest.mark.parametrize("name", sorted(ORGANISERS_ALPHA))
def test_ordinal_alpha_as_in_the_organisers_notebook(report: dict, name: str) -> None:
    assert report[name]["alpha_ordinal"] == pytest.approx(ORGANISERS_ALPHA[name], abs=5e-7)


DOCS = Path(__file__).resolve().parents[2] / "docs" / "labels.md"


def test_the_docs_table_is_the_commands_output(report: dict) -> None:
    section = DOCS.read_text().split("## The LLMJudge figures", 1)[1]
    rows = [line for line in section.splitlines() if line.startswith("| ") and "|---" not in line]
    table = {cells[0]: cells[1:] for cells in (line.strip("| ").split(" | ") for line in rows[1:])}
    assert len(table) == 33
    for name, cells in table.items():
        r = report[name]
        expected = [*_command(r).values(), r["alpha_ordinal"]]
        assert [float(c) for c in cells[:5]] == [round(v, 4) for v in expected]
        assert int(cells[5]) == r["clipped"]


def test_the_docs_python_example_runs(monkeypatch: pytest.MonkeyPatch, capsys) -> None:  # type: ignore[no-untyped-def]
    block = DOCS.read_text().split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(DOCS.parents[1])  # the example's paths are relative to the project
    exec(compile(block, str(DOCS), "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "0.5 0.5"
    assert lines[-2] == "willia-umbrela1 0.2863 0.3985 0.4918"
    assert lines[-1].startswith("[[1521, 369, 88, 27], ")
