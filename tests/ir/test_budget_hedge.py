"""The hedge order and yield allocation on small hand-made pools, fed back with gold labels."""

from __future__ import annotations

import pytest

from docket.errors import UserError
from docket.holes.hedge import HedgeWeights, rank_loss
from docket.holes.order import HoleOrder
from docket.ir.formats import Run

RUNS = [
    Run("bad1", {"q1": tuple(f"x{i}" for i in range(10)), "q2": tuple(f"y{i}" for i in range(10))}),
    Run("good", {"q1": tuple(f"g{i}" for i in range(10)), "q2": tuple(f"h{i}" for i in range(10))}),
    Run("bad2", {"q1": tuple(f"z{i}" for i in range(10)), "q2": tuple(f"w{i}" for i in range(10))}),
]
CANDIDATES = [(q, d) for run in RUNS for q, docs in run.ranking.items() for d in docs]
GOLD = {key: int(key[1][0] in "gh") for key in CANDIDATES}


def _draw(order: str, budget: int, batch: int = 4, gold=GOLD, runs=RUNS) -> list:  # type: ignore[no-untyped-def]
    candidates = sorted(gold)
    planner = HoleOrder(candidates, runs, {}, order=order, seed=3)
    while len(planner.drawn) < budget:
        keys = planner.next_batch(min(batch, budget - len(planner.drawn)))
        if not keys:
            break
        planner.update({key: gold[key] for key in keys})
    return planner.drawn


@pytest.mark.parametrize("order", ["hedge", "depth+yield", "bandit+yield", "hedge+yield"])
def test_the_order_is_deterministic_whatever_the_batch(order: str) -> None:
    one = _draw(order, len(CANDIDATES), batch=1)
    assert one == _draw(order, len(CANDIDATES), batch=5) == _draw(order, len(CANDIDATES))
    assert sorted(one) == sorted(CANDIDATES)
    assert _draw(order, 9) == one[:9]  # a larger budget continues the same order


def test_a_run_with_relevant_documents_gains_weight() -> None:
    weights = HedgeWeights({"a": ["d1", "d2"], "b": ["d3", "d1"]}, {})
    weights.feedback("d3", True)  # only b retrieves d3
    assert weights.weight["b"] > 1.0 > weights.weight["a"]
    weights.feedback("d1", False)  # both retrieve d1; a ranks it higher, so loses more
    assert weights.weight["b"] > weights.weight["a"]
    assert rank_loss(1, 2) > rank_loss(2, 2) > 0


def test_known_judgments_are_outcomes_from_the_start() -> None:
    weights = HedgeWeights({"a": ["d1", "d2"], "b": ["d3", "d4"]}, {"d3": 1})
    assert weights.weight["b"] > weights.weight["a"]
    assert weights.best(["d2", "d4"], set()) == "d4"  # same rank: the heavier run's first


def test_hedge_finds_the_all_relevant_run() -> None:
    budget = 16
    depth = sum(GOLD[k] for k in _draw("depth", budget))
    found = sum(GOLD[k] for k in _draw("hedge", budget, batch=2))
    assert depth == 6
    assert found >= 1.5 * depth, found


def test_yield_allocation_spends_more_on_the_query_that_yields() -> None:
    gold = {key: int(key[0] == "q1") for key in CANDIDATES}  # q1 all relevant, q2 none
    drawn = _draw("depth+yield", 30, gold=gold)
    per_query = {q: sum(1 for k in drawn if k[0] == q) for q in ("q1", "q2")}
    assert per_query["q1"] >= 2 * per_query["q2"], per_query
    assert [k[0] for k in _draw("depth", 30, gold=gold)].count("q1") == 15  # round robin


def test_unknown_allocation() -> None:
    with pytest.raises(UserError, match="unknown order 'depth\\+best'"):
        HoleOrder(CANDIDATES, RUNS, {}, order="depth+best")
