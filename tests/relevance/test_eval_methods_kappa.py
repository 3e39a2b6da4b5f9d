"""``docket eval methods``: kappa against gold, who answered escalations, per-pair rows,
progress lines off a terminal, and a plot whose points and labels do not hide each other."""

from __future__ import annotations

import json
import re
from itertools import combinations

import numpy as np
import pytest
from typer.testing import CliRunner

from docket.agreement import weighted_kappa
from docket.cli.main import app
from docket.jobs.methods import compare_methods
from docket.llm.fake import register_fake
from docket.llm.types import Request
from docket.relevance.evaluate_plot import build_figure
from tests.relevance.relevance_fakes import load_dl21, recorded_judge


@pytest.fixture
def dl21(shared_data):
    path = shared_data / "trec_dl21_dev.jsonl"
    return path, load_dl21(path)


def _kappa_by_hand(a: list[int], b: list[int]) -> float:
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    expected = sum((a.count(c) / n) * (b.count(c) / n) for c in (0, 1))
    return (observed - expected) / (1 - expected)


def _weighted_by_hand(a: list[int], b: list[int], k: int = 4) -> float:
    n = len(a)
    observed = sum(abs(x - y) for x, y in zip(a, b, strict=True)) / n
    pa = [a.count(c) / n for c in range(k)]
    pb = [b.count(c) / n for c in range(k)]
    expected = sum(pa[i] * pb[j] * abs(i - j) for i in range(k) for j in range(k))
    return 1 - observed / expected  # linear weights: the (k - 1) factors cancel


def _methods(path, *args: object):  # type: ignore[no-untyped-def]
    argv = ["eval", "methods", str(path), "--cache", "off", *map(str, args)]
    result = CliRunner().invoke(app, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_kappa_beside_bacc_and_escalations_answered_by_gold(dl21, tmp_path) -> None:
    path, rows = dl21
    gpt, mistral = recorded_judge(rows, "gpt-4o"), recorded_judge(rows, "mistral")
    out = tmp_path / "r.json"
    result = _methods(
        path, "--methods", "dream,single", "--model", gpt.name, "--out", out,
        "--agent-model", gpt.name, "--agent-model", mistral.name,
    )  # fmt: skip
    report = json.loads(out.read_text())["methods"]
    gold = [r["label"] for r in rows]
    single = [r["llm_labels"]["gpt-4o"] for r in rows]
    assert report["single"]["kappa"] == pytest.approx(_kappa_by_hand(single, gold))
    disagree = sum(r["llm_labels"]["gpt-4o"] != r["llm_labels"]["mistral"] for r in rows)
    assert report["dream"]["escalations_answered"] == f"{disagree} by gold"
    assert report["single"]["escalations_answered"] == "none escalated"
    table = " ".join(result.output.split())
    assert (
        f"Cohen's kappa, final labels vs gold │ {report['dream']['kappa']:.3f} (n=80) │ "
        f"{report['single']['kappa']:.3f} (n=80)" in table
    )
    assert f"escalations answered │ {disagree} by gold │ none escalated" in table


def test_escalations_answered_by_reviewers_or_left_out(dl21, tmp_path) -> None:
    path, rows = dl21
    gpt, mistral = recorded_judge(rows, "gpt-4o"), recorded_judge(rows, "mistral")
    split = [r for r in rows if r["llm_labels"]["gpt-4o"] != r["llm_labels"]["mistral"]]
    labels = tmp_path / "humans.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"qid": r["qid"], "docid": r["docid"], "label": r["label"]}) + "\n"
            for r in split[:5]
        )
    )
    out, pairs_out = tmp_path / "r.json", tmp_path / "pairs.jsonl"
    _methods(
        path, "--methods", "dream", "--model", gpt.name, "--humans", labels, "--out", out,
        "--agent-model", gpt.name, "--agent-model", mistral.name, "--pairs-out", pairs_out,
    )  # fmt: skip
    dream = json.loads(out.read_text())["methods"]["dream"]
    assert dream["escalations_answered"] == f"5 by reviewers, {len(split) - 5} left out"
    per_pair = [json.loads(line) for line in pairs_out.read_text().splitlines()]
    assert len(per_pair) == 80
    answered = [p["answered_by"] for p in per_pair]
    assert answered.count("reviewers") == 5 and answered.count("left out") == len(split) - 5
    assert answered.count(None) == 80 - len(split)
    left = next(p for p in per_pair if p["answered_by"] == "left out")
    assert (left["label"], left["final"], left["correct"], left["decided_by"]) == (
        None,
        None,
        None,
        "escalated",
    )
    decided = next(p for p in per_pair if p["answered_by"] is None)
    assert (
        decided["correct"] == (decided["final"] == decided["gold"])
        and decided["gold_grade"] is not None
    )


def _grader(rows: list[dict]) -> str:
    """A graded judge that answers the gold grade, one grade too high on every third pair."""
    grades = {r["passage"][:60]: (r["grade"], i) for i, r in enumerate(rows)}

    def script(request: Request) -> str:
        user = next(m.content for m in request.messages if m.role == "user")
        first = re.search(r"<chunk>\n\[S1\] (.*?)\n", user, re.S).group(1)
        grade, i = next(v for k, v in grades.items() if k.startswith(first[:30]))
        graded = min(3, grade + 1) if i % 3 == 0 else grade
        return json.dumps({"grade": graded, "evidence": [], "reasoning": "scripted"})

    return register_fake("kappa-grader", script)


def test_weighted_kappa_for_graded_judges(dl21, tmp_path) -> None:
    path, rows = dl21
    out = tmp_path / "r.json"
    _methods(
        path, "--methods", "single", "--scale", "graded", "--model", _grader(rows), "--out", out
    )
    single = json.loads(out.read_text())["methods"]["single"]
    gold = [r["grade"] for r in rows]
    predicted = [min(3, g + 1) if i % 3 == 0 else g for i, g in enumerate(gold)]
    assert single["graded_pairs"] == 80
    assert single["weighted_kappa"] == pytest.approx(_weighted_by_hand(predicted, gold))
    labels = [int(g >= 2) for g in predicted]
    assert single["kappa"] == pytest.approx(_kappa_by_hand(labels, [r["label"] for r in rows]))


def test_weighted_kappa_quadratic_by_hand() -> None:
    a, b = [0, 1, 2, 3, 3], [0, 2, 2, 3, 1]
    # quadratic weights ((i - j) / 3) ** 2; observed 1/5 * (1/9 + 4/9)
    pa, pb = np.bincount(a, minlength=4) / 5, np.bincount(b, minlength=4) / 5
    w = (np.subtract.outer(range(4), range(4)) / 3) ** 2
    expected = 1 - (5 / 9 / 5) / float(pa @ w @ pb)
    assert weighted_kappa(a, b, [0, 1, 2, 3], "quadratic") == pytest.approx(expected)
    assert weighted_kappa(a, a, [0, 1, 2, 3]) == pytest.approx(1.0)


def test_progress_lines_when_stderr_is_not_a_terminal(dl21) -> None:
    path, rows = dl21
    gpt = recorded_judge(rows, "gpt-4o")
    result = _methods(path, "--methods", "single", "--model", gpt.name, "--progress-every", 20)
    lines = [line for line in result.stderr.splitlines() if "pairs" in line]
    assert lines == [f"single: {n}/80 pairs" for n in (20, 40, 60, 80)]


def test_plot_points_nest_and_labels_do_not_overprint(dl21, db_url) -> None:
    path, rows = dl21
    fake = recorded_judge(rows, "gpt-4o")
    # single and majority of one judge land on the very same point; DREAM's R=1..3 too.
    report = compare_methods(
        path, ["dream", "single", "majority", "lara"], model=fake.name, samples=1, cache="off",
        db=db_url,
    ).report  # fmt: skip
    figure = build_figure(report)
    axes = figure.axes[0]
    markers = [(line.get_marker(), line.get_markersize()) for line in axes.lines]
    assert len(set(markers)) == len(markers) == 4  # own shape and size per method
    assert all(line.get_fillstyle() == "none" for line in axes.lines)
    renderer = figure.canvas.get_renderer()
    boxes = [text.get_window_extent(renderer) for text in axes.texts]
    assert len(boxes) >= 5  # R=1, R=2, R=3 share one label; five LARA budgets
    assert not any(a.overlaps(b) for a, b in combinations(boxes, 2))
    legend = [t.get_text() for t in axes.get_legend().get_texts()]
    assert legend[1] == "single: none escalated"
    assert "lara: 3 escalated, answered by gold" in legend


def test_options_of_methods_not_compared_are_refused(dl21) -> None:
    path, _ = dl21
    result = CliRunner().invoke(
        app, ["eval", "methods", str(path), "--methods", "single,lara", "--rounds", "3"]
    )
    assert result.exit_code != 0
    assert "--rounds does not apply to --method single,lara" in str(result.exception)
