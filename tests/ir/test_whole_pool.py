"""Whole pool or holes only: both completions, side by side in eval systems."""

from __future__ import annotations

from pathlib import Path

from docket.holes import fill_holes
from docket.ir.evaluate import compare_systems
from docket.ir.formats import read_qrels, read_runs
from docket.jobs import JobSpec
from tests.ir.conftest import HOLE_LABELS, QRELS, TableJudge


def test_whole_pool_relabels_judged_pooled_pairs_and_both_completions_rank(
    bench, tmp_path: Path
) -> None:
    labels = {**HOLE_LABELS, ("q1", "d1"): 0, ("q1", "d2"): 1}  # two judged pairs disagree
    filled = fill_holes(
        bench.qrels, bench.runs, bench.queries, bench.corpus,
        JobSpec.of(db=str(tmp_path / "w.db")), depth=3, judge=TableJudge(labels),
        corpus_index=bench.index, whole_pool=True,
    )  # fmt: skip
    holes_only, whole = filled.result.completed, filled.result.whole_pool
    assert whole is not None
    assert holes_only["q1"]["d1"] == QRELS["q1"]["d1"]  # holes only: the original label wins
    assert whole["q1"]["d1"] == 0 and whole["q1"]["d2"] == 1  # whole pool: the new labels
    assert "d5" in holes_only["q2"] and all(d in whole["q2"] for d in ("d4", "d9"))
    pooled = {(q, d) for q, docs in whole.items() for d in docs}
    assert set(HOLE_LABELS) <= pooled and ("q2", "d5") in pooled  # judged and pooled
    report = compare_systems(
        read_runs(bench.runs), read_qrels(bench.qrels), holes_only, ["nDCG@3"],
        whole_pool=whole, condensed=False,
    )  # fmt: skip
    assert {c.variant for c in report.comparisons} == {"completed", "whole_pool"}
    assert set(report.ranks) == {"original", "completed", "whole_pool"}
