"""Hole@k, pooling, re-evaluation, rank shifts and tau on the hand-made benchmark,
and agreement with ir_measures on random data."""

from __future__ import annotations

import ir_measures
import numpy as np
import pytest

from docket.ir.evaluate import compare_systems, condense, evaluate_runs, parse_measures
from docket.ir.formats import Run, read_qrels, read_run, read_runs
from docket.ir.holes import find_holes, hole_rate

from .conftest import QRELS, RUNS


def _runs() -> list[Run]:
    return [Run(name, {q: tuple(d) for q, d in r.items()}) for name, r in RUNS.items()]


def test_hole_at_k_by_hand() -> None:
    report = find_holes(QRELS, _runs(), depth=3)
    assert report.hole_at_k == pytest.approx({"A": 1 / 3, "B": 2 / 3, "C": 0.0})
    assert report.per_query["B"] == pytest.approx({"q1": 2 / 3, "q2": 2 / 3})
    assert report.pool_size == 11
    assert [(h.qid, h.docid, h.best_rank) for h in report.holes] == [
        ("q1", "d7", 1),
        ("q1", "d8", 2),
        ("q1", "d9", 2),
        ("q2", "d9", 1),
        ("q2", "d6", 3),
        ("q2", "d8", 3),
    ]
    assert report.holes[0].systems == ("B",)
    assert report.holes_per_query() == {"q1": 3, "q2": 3}


def test_hole_at_2_and_short_rankings() -> None:
    # C answers q2 with two documents: the cutoff shrinks to the ranking length
    report = find_holes(QRELS, _runs(), depth=2)
    assert report.hole_at_k == pytest.approx({"A": 1 / 4, "B": 3 / 4, "C": 0.0})


def test_unanswered_and_unjudged_queries() -> None:
    runs = [Run("X", {"q1": ("d1", "zz"), "q9": ("d1",)})]
    report = find_holes(QRELS, runs, depth=2)
    # q2 unanswered counts 1.0 (as Judged@k counts it 0); q9 has no qrels and is not pooled
    assert report.per_query["X"] == {"q1": 0.5, "q2": 1.0}
    assert report.queries_without_qrels == ("q9",)
    assert report.missing_queries == {"X": 1}


def test_hole_equals_one_minus_judged_of_ir_measures(bench) -> None:
    qrels, runs = read_qrels(bench.qrels), read_runs(bench.runs)
    for k in (1, 2, 3, 5):
        judged = ir_measures.parse_measure(f"Judged@{k}")
        for run in runs:
            raw = {q: {d: 10.0 - i for i, d in enumerate(docs)} for q, docs in run.ranking.items()}
            expected = 1 - ir_measures.calc_aggregate([judged], qrels, raw)[judged]
            assert hole_rate(qrels, run, k)[0] == pytest.approx(expected)


def _random_benchmark(seed: int, ties: bool) -> tuple[dict, list[Run], list[dict]]:
    rng = np.random.default_rng(seed)
    qrels = {
        f"q{q}": {f"d{d}": int(rng.integers(0, 3)) for d in rng.choice(60, size=25, replace=False)}
        for q in range(15)
    }
    runs, raws = [], []
    for s in range(4):
        raw = {}
        for q in range(12):  # three qrels queries unanswered
            docs = rng.choice(60, size=40, replace=False)
            scores = rng.integers(0, 8, size=40) if ties else rng.permutation(40)
            raw[f"q{q}"] = {f"d{d}": float(v) for d, v in zip(docs, scores, strict=True)}
        ranking = {
            q: tuple(sorted(ds, key=lambda d, ds=ds: (ds[d], d), reverse=True))
            for q, ds in raw.items()
        }
        runs.append(Run(f"s{s}", ranking))
        raws.append(raw)
    return qrels, runs, raws


def test_measures_agree_with_ir_measures() -> None:
    qrels, runs, raws = _random_benchmark(7, ties=False)
    measures = parse_measures(
        ["nDCG@10", "P@10", "R@100", "AP", "Judged@10", "P(rel=2)@5", "Judged"]
    )
    ours = evaluate_runs(qrels, runs, measures)
    for run, raw in zip(runs, raws, strict=True):
        theirs = ir_measures.calc_aggregate(measures, qrels, raw)
        assert ours[run.name] == pytest.approx({str(m): v for m, v in theirs.items()})
        assert 1 - hole_rate(qrels, run, 10)[0] == pytest.approx(theirs[measures[4]])


def test_ties_follow_trec_eval_order(tmp_path) -> None:
    qrels, _, raws = _random_benchmark(11, ties=True)
    runs = []
    for i, raw in enumerate(raws):  # read back from files: docket's own ordering
        lines = [f"{q} Q0 {d} 1 {v} t" for q, ds in raw.items() for d, v in ds.items()]
        (tmp_path / f"s{i}.trec").write_text("\n".join(lines))
        runs.append(read_run(tmp_path / f"s{i}.trec"))
    measures = parse_measures(["P@5", "nDCG@10", "AP"])  # pytrec_eval ranks raw scores itself
    ours = evaluate_runs(qrels, runs, measures)
    for run, raw in zip(runs, raws, strict=True):
        theirs = ir_measures.calc_aggregate(measures, qrels, raw)
        assert ours[run.name] == pytest.approx({str(m): v for m, v in theirs.items()})


def test_condensed_lists_drop_unjudged_documents() -> None:
    run = _runs()[1]  # B: q1 d7 d8 d1 -> d1 ; q2 d9 d4 d6 -> d4
    assert condense(run, QRELS).ranking == {"q1": ("d1",), "q2": ("d4",)}
    scores = evaluate_runs(QRELS, [condense(run, QRELS)], parse_measures(["P@1"]))
    assert scores["B"]["P@1"] == 1.0
    empty = Run("E", {"q1": ("zz",)})  # condenses to nothing: counts 0, no crash
    assert evaluate_runs(QRELS, [condense(empty, QRELS)], parse_measures(["Judged@1"]))["E"] == {
        "Judged@1": 0.0
    }


def test_rank_shifts_tau_and_tau_ap_by_hand(bench) -> None:
    completed = read_qrels(bench.completed)
    report = compare_systems(_runs(), QRELS, completed, measures=["P@3", "Judged@3"])
    # P@3 original: A 1/3, B 1/3, C 1/2; completed: A 1/2, B 2/3, C 1/2
    assert report.scores["completed"]["B"]["P@3"] == pytest.approx(2 / 3)
    assert report.ranks["original"] == {"A": 2, "B": 2, "C": 1}
    assert report.ranks["completed"] == {"A": 2, "B": 1, "C": 2}
    assert report.shifts == {"A": 0, "B": 1, "C": -1}
    by_variant = {c.variant: c for c in report.comparisons}
    assert by_variant["completed"].tau == pytest.approx(-0.5)
    assert by_variant["completed"].tau_ap == pytest.approx(-1.0)
    assert by_variant["completed"].changed == 2
    assert report.scores["completed"]["B"]["Judged@3"] == pytest.approx(1.0)
    assert set(report.scores) == {
        "original",
        "original_condensed",
        "completed",
        "completed_condensed",
    }


def test_without_completed_qrels_shifts_are_against_condensed() -> None:
    report = compare_systems(_runs(), QRELS, measures=["P@3"])
    # condensed P@3: A q1 d1 d2 -> 1/3, q2 d4 d5 -> 1/3; B q1 d1, q2 d4 -> 1/3 each; C 1/2
    assert report.shift_variant == "original_condensed"
    assert report.shifts == {"A": 0, "B": 0, "C": 0}


def test_unknown_measure_is_a_user_error() -> None:
    from docket.errors import UserError

    with pytest.raises(UserError, match="unknown measure 'nDGC@10'"):
        parse_measures(["nDGC@10"])


def test_documents_missing_from_the_corpus_are_counted(bench) -> None:
    from docket.ir.corpus import open_corpus

    runs = [*_runs(), Run("D", {"q1": ("d404", "d1")})]
    report = find_holes(QRELS, runs, depth=3, corpus=open_corpus(bench.corpus, bench.index))
    assert report.missing_documents == (("q1", "d404"),)
    assert ("q1", "d404") in report.hole_keys  # still a hole; filling skips it
