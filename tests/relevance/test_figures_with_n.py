"""One balanced accuracy with one rule for an absent class, and agreement figures that say
what they are computed over and their n (``docket eval methods``)."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from docket.agreement import MIN_PAIRS, balanced_accuracy, shown
from docket.cli.main import app
from tests.relevance.relevance_fakes import load_dl21, recorded_judge


def test_balanced_accuracy_by_hand_and_the_absent_class_rule() -> None:
    assert balanced_accuracy([1, 1, 1, 0, 0], [1, 1, 0, 0, 1]) == pytest.approx((2 / 3 + 1 / 2) / 2)
    assert balanced_accuracy([1, 0], [None, 0]) == pytest.approx(0.5)  # escalated: a miss
    # All gold relevant: a judge that says "relevant" to everything is not 100 % balanced.
    assert math.isnan(balanced_accuracy([1, 1, 1], [1, 1, 1]))
    assert math.isnan(balanced_accuracy([], []))
    with pytest.raises(ValueError, match="not among"):
        balanced_accuracy([2], [1])


def test_a_figure_shows_its_n_and_too_few_pairs_are_not_a_number() -> None:
    assert shown(0.4123, 80) == "0.412 (n=80)"
    assert shown(0.5, 80, "%") == "50.0% (n=80)"
    assert shown(1.0, MIN_PAIRS - 1) == f"too few (n={MIN_PAIRS - 1})"
    assert shown(None, 6) == shown(math.nan, 6) == "n/a (n=6)"


def _methods(path, *args: object) -> tuple[str, dict]:  # type: ignore[no-untyped-def]
    out = path.parent / "report.json"
    argv = ["eval", "methods", str(path), "--cache", "off", "--out", str(out), *map(str, args)]
    result = CliRunner().invoke(app, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split()), json.loads(out.read_text())["methods"]


def test_an_all_relevant_gold_set_has_no_balanced_accuracy(shared_data, tmp_path) -> None:
    rows = load_dl21(shared_data / "trec_dl21_dev.jsonl")
    relevant = [r for r in rows if r["label"] == 1][:12]
    path = tmp_path / "relevant.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in relevant))
    judge = recorded_judge(relevant, "gpt-4o")
    table, report = _methods(path, "--methods", "single", "--model", judge.name)
    single = report["single"]
    assert single["balanced_accuracy"] is None and single["irrelevant_recall"] is None
    assert single["figures"]["balanced_accuracy"] == {
        "value": None, "n": 12, "over": "final labels vs gold"}  # fmt: skip
    assert "balanced accuracy, final labels vs gold │ n/a (n=12)" in table
    recall = 100 * single["relevant_recall"]
    assert f"relevant recall, final labels of gold-relevant pairs │ {recall:.1f}% (n=12)" in table


def test_lara_shows_no_weighted_kappa_over_its_escalations(shared_data, tmp_path) -> None:
    # LARA gives labels, not grades: the only "grades" are gold's answers to the 3 pairs it
    # escalates, which once made a weighted kappa of 1.000 beside a Cohen's kappa of 0.
    path = shared_data / "trec_dl21_dev.jsonl"
    rows = load_dl21(path)
    judge = recorded_judge(rows, "gpt-4o")
    local = tmp_path / "dl21.jsonl"
    local.write_text(path.read_text())
    table, report = _methods(local, "--methods", "lara", "--model", judge.name)
    lara = report["lara"]
    assert lara["escalated"] == 3 and lara["weighted_kappa"] is None
    assert lara["figures"]["weighted_kappa"]["n"] == 0
    assert "weighted kappa (linear), final grades vs gold grades │ n/a (n=0)" in table
    assert f"Cohen's kappa, final labels vs gold │ {lara['kappa']:.3f} (n=80)" in table


def test_the_pilot_and_eval_methods_agree_on_an_all_relevant_gold_set(shared_data, tmp_path):
    rows = load_dl21(shared_data / "trec_dl21_dev.jsonl")
    relevant = [r for r in rows if r["label"] == 1][:14]
    path = tmp_path / "relevant.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in relevant))
    judge = recorded_judge(relevant, "gpt-4o")
    argv = ["judge", str(path), "--model", judge.name, "--db", str(tmp_path / "p.db"),
            "--cache", "off", "--pilot", "12"]  # fmt: skip
    result = CliRunner().invoke(app, argv, env={"COLUMNS": "200"}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    pilot = " ".join(result.output.split())
    assert "balanced accuracy, pilot labels vs gold │ n/a (n=12)" in pilot
    table, report = _methods(path, "--methods", "single", "--model", judge.name)
    assert report["single"]["balanced_accuracy"] is None
    assert "balanced accuracy, final labels vs gold │ n/a (n=14)" in table
