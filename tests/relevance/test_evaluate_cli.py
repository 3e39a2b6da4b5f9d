"""Evaluation on the shared TREC DL 2021 pairs with recorded LLM labels as fake judges."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from docket.cli.main import app
from docket.errors import ConfigError, InputError
from docket.jobs.methods import compare_methods
from docket.relevance import plot_curves, read_pairs
from docket.relevance.metrics import class_recalls
from tests.relevance.relevance_fakes import load_dl21, recorded_judge

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def dl21(shared_data):
    path = shared_data / "trec_dl21_dev.jsonl"
    return path, read_pairs(path), load_dl21(path)


@pytest.mark.parametrize(("judge", "expected"), [("gpt-4o", 0.738), ("llama3.2", 0.675)])
def test_single_judge_reproduces_recorded_balanced_accuracy(dl21, judge, expected, db_url):
    _, pairs, rows = dl21
    fake = recorded_judge(rows, judge)
    report = compare_methods(pairs, ["single"], model=fake.name, cache="off", db=db_url).report
    metrics = report.metrics["single"]
    assert len(pairs) == 80 and metrics.gold_pairs == 80
    assert metrics.balanced_accuracy == pytest.approx(expected, abs=5e-4)
    assert metrics.escalation_rate == 0 and metrics.calls_per_pair == 1
    assert metrics.automatic_accuracy == pytest.approx(
        sum(r["llm_labels"][judge] == r["label"] for r in rows) / 80
    )


def test_dream_between_two_recorded_judges_escalates_their_disagreements(dl21, tmp_path, db_url):
    _, pairs, rows = dl21
    gpt, mistral = recorded_judge(rows, "gpt-4o"), recorded_judge(rows, "mistral")
    report = compare_methods(
        pairs, ["dream"], model=gpt.name, agent_models=[gpt.name, mistral.name], cache="off",
        db=db_url,
    ).report  # fmt: skip
    # expected by hand: agreement decides, disagreement goes to gold (simulated humans)
    disagree = [r["llm_labels"]["gpt-4o"] != r["llm_labels"]["mistral"] for r in rows]
    final = [
        r["label"] if d else r["llm_labels"]["gpt-4o"] for r, d in zip(rows, disagree, strict=True)
    ]
    expected = class_recalls(final, [r["label"] for r in rows])
    metrics = report.metrics["dream"]
    assert metrics.escalation_rate == pytest.approx(sum(disagree) / 80)
    assert metrics.balanced_accuracy == pytest.approx(expected.balanced_accuracy)
    assert metrics.calls_per_pair == pytest.approx((2 * 80 + 2 * sum(disagree)) / 80)
    # recorded labels cannot read each other: every round-2 turn repeats round 1
    assert (metrics.engagement, metrics.later_turns) == (0.0, 2 * sum(disagree))
    curve = report.curves["dream"]
    assert [p.setting for p in curve] == ["R=1", "R=2", "R=3"]
    assert {p.escalation_rate for p in curve} == {metrics.escalation_rate}
    out = plot_curves(report, tmp_path / "curve.png")
    assert out.read_bytes()[:8] == PNG_MAGIC


def test_lara_budget_curve_on_recorded_text_answers(dl21, db_url):
    _, pairs, rows = dl21
    fake = recorded_judge(rows, "gpt-4o")
    report = compare_methods(pairs, ["lara"], model=fake.name, cache="off", db=db_url).report
    curve = report.curves["lara"]
    assert [p.value for p in curve] == [0.0, 0.035, 0.125, 0.25, 0.5]
    assert [round(p.escalation_rate * 80) for p in curve] == [0, 3, 10, 20, 40]
    assert curve[0].balanced_accuracy == pytest.approx(0.7375)
    assert curve[-1].balanced_accuracy > curve[0].balanced_accuracy
    assert report.metrics["lara"].escalation_rate == pytest.approx(3 / 80)
    assert all(j.config["p_source"] == "logprobs" for j in report.judgments["lara"])


def test_cli_eval_methods_table_json_and_plot(dl21, tmp_path):
    path, _, rows = dl21
    fake = recorded_judge(rows, "gpt-4o")
    out, png = tmp_path / "report.json", tmp_path / "curve.png"
    args = ["eval", "methods", str(path), "--methods", "dream,single,lara,majority"]
    args += ["--model", fake.name, "--out", str(out), "--plot", str(png), "--samples", "3"]
    args += ["--cache", str(tmp_path / "cache.sqlite")]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "balanced accuracy" in result.output and "73.8%" in result.output
    assert "later turns" in result.output  # the engagement row (wrapped at 80 columns)
    report = json.loads(out.read_text())
    assert set(report["methods"]) == {"dream", "single", "lara", "majority"}
    assert report["methods"]["single"]["balanced_accuracy"] == pytest.approx(0.7375)
    assert report["methods"]["majority"]["calls_per_pair"] == 3
    assert report["methods"]["dream"]["engagement"] is None  # one judge: all agree at once
    assert report["model"] == fake.name and report["pairs"] == 80
    assert [p["setting"] for p in report["curves"]["dream"]] == ["R=1", "R=2", "R=3"]
    assert png.read_bytes()[:8] == PNG_MAGIC
    # DREAM R=1 and R=3 repeated R=2's consensus calls from the cache: no new calls
    assert len(fake.requests) == 80 * (2 + 1 + 1 + 3)
    again = CliRunner().invoke(app, args, catch_exceptions=False)
    assert again.exit_code == 0 and len(fake.requests) == 80 * 7  # all from the cache
    assert json.loads(out.read_text())["methods"] == report["methods"]


def test_cli_refuses_bad_input_and_writes_nothing(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"qid": "1", "query": "q", "docid": "d", "text": "t", "label": 5}\n')
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        app,
        ["eval", "methods", str(bad), "--model", "fake:echo", "--out", str(out), "--cache", "off"],
    )
    assert isinstance(result.exception, InputError) and result.exception.line == 1
    assert not out.exists()
    result = CliRunner().invoke(app, ["eval", "methods", str(bad), "--methods", "dream,vote"])
    assert isinstance(result.exception, ConfigError) and "vote" in str(result.exception)
    result = CliRunner().invoke(app, ["eval", "methods", str(bad), "--rounds", "0"])
    assert isinstance(result.exception, ConfigError) and "rounds" in str(result.exception)
