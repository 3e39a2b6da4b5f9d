"""fill_holes with a budget: stops at it, replays from the store, continues the same order."""

from __future__ import annotations

from pathlib import Path

import pytest

from docket.errors import ConfigError, UserError
from docket.holes import fill_holes
from docket.holes.oracle import OracleJudge
from docket.ir.documents import Document
from docket.ir.formats import Run
from docket.jobs import JobSpec
from tests.helpers_judges import KeywordJudge

RUNS = [
    Run("bad1", {q: tuple(f"{q}x{i}" for i in range(10)) for q in ("q1", "q2")}),
    Run("good", {q: tuple(f"{q}g{i}" for i in range(10)) for q in ("q1", "q2")}),
    Run("bad2", {q: tuple(f"{q}z{i}" for i in range(10)) for q in ("q1", "q2")}),
]
QRELS = {"q1": {"judged": 0}, "q2": {"judged": 1}}
QUERIES = {"q1": "zebra food", "q2": "zebra home"}


class Corpus:
    """Documents of the 'good' run mention zebras; the others do not."""

    def get_many(self, docids):  # type: ignore[no-untyped-def]
        return {d: Document(d, "zebra" if "g" in d else "horse") for d in docids}


def _fill(db: Path, budget, order: str = "bandit", judge=None):  # type: ignore[no-untyped-def]
    judge = judge or KeywordJudge()
    filled = fill_holes(
        QRELS, RUNS, QUERIES, Corpus(), JobSpec.of(db=str(db)), depth=10, budget=budget,
        order=order, batch=3, judge=judge,
    )  # fmt: skip
    return filled, judge


def _labels(filled) -> dict:  # type: ignore[no-untyped-def]
    return {(j.qid, j.docid): j.label for j in filled.result.judgments}


@pytest.mark.parametrize("order", ["depth", "mtf", "bandit"])
def test_budget_10_then_20_is_budget_20_in_one_go(tmp_path: Path, order: str) -> None:
    first, judge = _fill(tmp_path / "a.db", 10, order)
    assert len(judge.calls) == 10 and first.run.outcome.judged == 10
    again, judge = _fill(tmp_path / "a.db", 20, order)
    assert len(judge.calls) == 10  # 10 new pairs; the first 10 come from the store
    assert again.run.outcome.skipped == 10 and again.run.outcome.judged == 10
    once, _ = _fill(tmp_path / "b.db", 20, order)
    assert _labels(again) == _labels(once) and len(_labels(once)) == 20
    assert set(judge.calls).isdisjoint(k[1] for k in _labels(first))


def test_bandit_and_mtf_fill_more_relevant_holes_than_depth(tmp_path: Path) -> None:
    found = {
        order: sum(_labels(_fill(tmp_path / f"{order}.db", "25%", order)[0]).values())
        for order in ("depth", "mtf", "bandit")
    }
    assert found["depth"] == 5  # 15 holes drawn by rank across three runs
    assert found["mtf"] >= 1.5 * found["depth"] and found["bandit"] >= 1.5 * found["depth"]


def test_a_budget_of_0_or_over_the_pool_is_refused_before_judging(tmp_path: Path) -> None:
    for budget, message in (("0", "0 pairs of the 60"), ("61", "61 pairs, over the 60")):
        with pytest.raises(UserError, match=message):
            _fill(tmp_path / "c.db", budget)
    assert not (tmp_path / "c.db").exists()  # nothing opened, nothing judged


def test_the_oracle_never_labels_a_real_hole(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="oracle judge needs a gold label; pair q1/"):
        _fill(tmp_path / "o.db", 3, judge=OracleJudge())
