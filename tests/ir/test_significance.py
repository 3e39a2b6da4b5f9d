"""Significance tests checked against scipy on fixed data, and through ``docket eval systems``."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats
from typer.testing import CliRunner

from docket.cli.main import app
from docket.ir.significance import compare_pairs, holm, paired_t_test, randomization_test

from .conftest import write_qrels, write_run

runner = CliRunner()
X = [0.61, 0.42, 0.93, 0.35, 0.77, 0.58, 0.49, 0.88, 0.12, 0.66]
Y = [0.55, 0.40, 0.80, 0.41, 0.70, 0.50, 0.52, 0.71, 0.10, 0.60]


def _scipy_exact(x: list[float], y: list[float]) -> float:
    result = stats.permutation_test(
        (np.asarray(x), np.asarray(y)),
        lambda a, b: np.mean(a - b),
        permutation_type="samples",
        n_resamples=np.inf,
        alternative="two-sided",
    )
    return float(result.pvalue)


def test_paired_t_test_is_scipys() -> None:
    assert paired_t_test(X, Y) == pytest.approx(stats.ttest_rel(X, Y).pvalue, rel=1e-12)
    assert paired_t_test(X, X) == 1.0
    assert paired_t_test([v + 0.25 for v in X], X) == 0.0  # equal non-zero differences
    assert math.isnan(paired_t_test([0.1], [0.2]))


def test_randomization_test_is_exact_when_it_can_be() -> None:
    # 2**10 sign vectors fit the budget: every one is enumerated, as scipy does.
    assert randomization_test(X, Y, permutations=2000) == pytest.approx(_scipy_exact(X, Y))
    assert randomization_test(X[:6], Y[:6], permutations=100) == pytest.approx(
        _scipy_exact(X[:6], Y[:6])
    )


def test_sampled_randomization_test_is_close_to_the_exact_value() -> None:
    exact = _scipy_exact(X, Y)
    sampled = randomization_test(X, Y, permutations=1000, seed=3)
    assert sampled != exact  # it did sample (p = (1 + hits) / 1001)
    assert sampled == pytest.approx(exact, abs=0.03)
    assert randomization_test(X, Y, permutations=1000, seed=3) == sampled


def test_holm_by_hand() -> None:
    adjusted, reject = holm([0.01, 0.04, 0.03, math.nan, 0.005], alpha=0.05)
    # Sorted 0.005, 0.01, 0.03, 0.04 (m = 4): 0.02, 0.03, 0.06, max(0.06, 0.04) = 0.06.
    assert adjusted[:3] == pytest.approx([0.03, 0.06, 0.06]) and adjusted[4] == pytest.approx(0.02)
    assert math.isnan(adjusted[3])
    assert reject == [True, False, False, False, True]


def test_compare_pairs_corrects_over_all_pairs() -> None:
    per_query = {
        "a": dict(enumerate(X)),
        "b": dict(enumerate(Y)),
        "c": {i: v + 0.3 + 0.01 * i for i, v in enumerate(Y)},
    }
    tests = compare_pairs(per_query, "original", "nDCG@10", permutations=2000)
    assert [(t.a, t.b) for t in tests] == [("a", "b"), ("a", "c"), ("b", "c")]
    raw = [stats.ttest_rel(X, Y).pvalue] + [1e-300] * 2
    raw[1] = stats.ttest_rel(X, [v + 0.3 + 0.01 * i for i, v in enumerate(Y)]).pvalue
    expected, _ = holm([t.t_p for t in tests])
    assert [t.t_p_holm for t in tests] == pytest.approx(expected)
    assert tests[0].t_p == pytest.approx(raw[0]) and tests[1].t_p == pytest.approx(raw[1])
    assert tests[2].t_significant and tests[2].randomization_significant  # constant shift


# Eight queries, three systems: A ranks the relevant document first, B third, C misses it.
QIDS = [f"q{i}" for i in range(1, 9)]
QRELS = {q: {"rel": 2, "n1": 0, "n2": 0} for q in QIDS}
RUNS = {
    "A": {q: ["rel", "n1", "n2"] if i % 4 else ["n1", "rel", "n2"] for i, q in enumerate(QIDS)},
    "B": {q: ["n1", "n2", "rel"] if i % 3 else ["rel", "n1", "n2"] for i, q in enumerate(QIDS)},
    "C": {q: ["n1", "n2", "x"] for q in QIDS},
}


@pytest.fixture
def eight(tmp_path: Path) -> tuple[Path, list[Path]]:
    qrels = write_qrels(tmp_path / "qrels.txt", QRELS)
    return qrels, [write_run(tmp_path / f"{n}.trec", r, n) for n, r in RUNS.items()]


def _systems(qrels: Path, runs: list[Path], *extra: object) -> str:
    args = ["eval", "systems", "--qrels", qrels, "--runs", *runs, "--measures", "nDCG@10,P@1"]
    result = runner.invoke(app, [str(a) for a in [*args, *extra]])
    assert result.exit_code == 0, result.output
    return result.output


def test_per_query_tsv_and_json_average_to_the_aggregate(eight, tmp_path: Path) -> None:
    qrels, runs = eight
    tsv, js, report = tmp_path / "pq.tsv", tmp_path / "pq.json", tmp_path / "r.json"
    _systems(qrels, runs, "--per-query", tsv, "--out", report, "--no-condensed")
    _systems(qrels, runs, "--per-query", js, "--no-condensed")
    rows = list(csv.DictReader(tsv.open(), delimiter="\t"))
    assert len(rows) == 3 * 2 * 8 and {r["variant"] for r in rows} == {"original"}
    scores = json.loads(report.read_text())["scores"]["original"]
    nested = json.loads(js.read_text())["original"]
    for system in RUNS:
        values = [
            float(r["value"]) for r in rows if r["system"] == system and r["measure"] == "nDCG@10"
        ]
        assert np.mean(values) == pytest.approx(scores[system]["nDCG@10"], abs=1e-6)
        assert sorted(nested[system]["P@1"]) == QIDS
    assert nested["A"]["P@1"]["q1"] == 0.0 and nested["A"]["P@1"]["q2"] == 1.0


def test_trec_eval_output(eight, tmp_path: Path) -> None:
    qrels, runs = eight
    text, report = tmp_path / "te.txt", tmp_path / "r.json"
    _systems(qrels, runs, "--trec-eval", text, "--out", report, "--no-condensed")
    lines = [line.split("\t") for line in text.read_text().splitlines()]
    assert lines[0] == ["runid".ljust(22), "all", "A"]
    overall = {(ln[0].strip(), ln[1]): ln[2] for ln in lines[: 1 + 2 * 9]}
    scores = json.loads(report.read_text())["scores"]["original"]["A"]
    # trec_eval's own names: nDCG@10 is ndcg_cut_10, P@1 is P_1
    assert float(overall[("ndcg_cut_10", "all")]) == pytest.approx(scores["nDCG@10"], abs=5e-5)
    assert overall[("P_1", "q1")] == "0.0000" and overall[("P_1", "q2")] == "1.0000"
    assert sum(ln[0].strip() == "runid" for ln in lines) == 3


def test_significance_through_the_cli_matches_scipy(eight, tmp_path: Path) -> None:
    qrels, runs = eight
    report, pq = tmp_path / "r.json", tmp_path / "pq.json"
    output = _systems(
        qrels,
        runs,
        "--significance",
        "--out",
        report,
        "--per-query",
        pq,
        "--completed-qrels",
        qrels,
    )
    flat = " ".join(output.split())  # titles wrap to the table's width
    assert "Paired significance, original qrels (Holm, alpha 0.05)" in flat
    assert "Paired significance, completed qrels (Holm, alpha 0.05)" in flat
    row = next(line for line in output.splitlines() if "0.0078" in line)  # A vs C
    assert row.count("yes") == 2
    tests = json.loads(report.read_text())["significance"]
    assert [(t["variant"], t["a"], t["b"]) for t in tests] == [
        (v, a, b)
        for v in ("original", "completed")
        for a, b in (("A", "B"), ("A", "C"), ("B", "C"))
    ]
    values = json.loads(pq.read_text())["original"]
    a = [values["A"]["nDCG@10"][q] for q in sorted(QIDS)]
    c = [values["C"]["nDCG@10"][q] for q in sorted(QIDS)]
    a_c = tests[1]
    assert a_c["t_p"] == pytest.approx(stats.ttest_rel(a, c).pvalue)
    assert a_c["randomization_p"] == pytest.approx(_scipy_exact(a, c))
    assert a_c["randomization_p"] == pytest.approx(2 / 256)  # only all-kept and all-flipped
    assert a_c["randomization_significant"] and a_c["t_significant"]
    expected, _ = holm([t["t_p"] for t in tests[:3]])
    assert [t["t_p_holm"] for t in tests[:3]] == pytest.approx(expected)


def test_per_query_means_are_the_aggregates_with_unanswered_queries() -> None:
    from docket.ir.evaluate import evaluate_runs, parse_measures
    from docket.ir.formats import Run
    from docket.ir.per_query import per_query_scores

    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}, "q3": {"d": 1}, "q4": {"e": 0}}
    run = Run("r", {"q1": ("a", "b"), "q2": ("x", "c"), "q9": ("d",), "q4": ("e",)})
    measures = parse_measures(["nDCG@10", "P@1", "AP", "R@100", "Judged@10", "RR"])
    aggregate = evaluate_runs(qrels, [run], measures)["r"]
    per_query = per_query_scores(qrels, [run], measures)["r"]
    for name, value in aggregate.items():
        assert sorted(per_query[name]) == ["q1", "q2", "q3", "q4"]  # q3 unanswered, q9 ignored
        assert np.mean(list(per_query[name].values())) == pytest.approx(value)
    assert per_query["nDCG@10"]["q3"] == 0.0 and per_query["Judged@10"]["q4"] == 1.0
