"""Budgeted orders (depth, mtf, bandit) on constructed pools, fed back with gold labels."""

from __future__ import annotations

import pytest

from docket.errors import UserError
from docket.holes.order import ORDERS, HoleOrder, parse_hole_count
from docket.ir.formats import Run

RUNS = [
    Run("bad1", {"q1": tuple(f"x{i}" for i in range(10)), "q2": tuple(f"y{i}" for i in range(10))}),
    Run("good", {"q1": tuple(f"g{i}" for i in range(10)), "q2": tuple(f"h{i}" for i in range(10))}),
    Run("bad2", {"q1": tuple(f"z{i}" for i in range(10)), "q2": tuple(f"w{i}" for i in range(10))}),
]
CANDIDATES = [(q, d) for run in RUNS for q, docs in run.ranking.items() for d in docs]
GOLD = {key: int(key[1][0] in "gh") for key in CANDIDATES}


def _draw(order: str, budget: int, seed: int = 0, batch: int = 4, known=None) -> list:  # type: ignore[no-untyped-def]
    planner = HoleOrder(CANDIDATES, RUNS, known or {}, order=order, seed=seed)
    while len(planner.drawn) < budget:
        keys = planner.next_batch(min(batch, budget - len(planner.drawn)))
        if not keys:
            break
        planner.update({key: GOLD[key] for key in keys})
    return planner.drawn


@pytest.mark.parametrize("order", ORDERS)
def test_orders_are_deterministic_for_a_seed_and_draw_each_pair_once(order: str) -> None:
    first = _draw(order, len(CANDIDATES), seed=7)
    assert first == _draw(order, len(CANDIDATES), seed=7)
    assert sorted(first) == sorted(CANDIDATES)  # every candidate once, nothing else


@pytest.mark.parametrize("order", ORDERS)
def test_a_larger_budget_continues_the_same_order(order: str) -> None:
    assert _draw(order, 10) == _draw(order, 20)[:10]


def test_depth_interleaves_runs_by_rank_and_queries_take_turns() -> None:
    assert _draw("depth", 6) == [
        ("q1", "x0"), ("q2", "y0"), ("q1", "g0"), ("q2", "h0"), ("q1", "z0"), ("q2", "w0"),
    ]  # fmt: skip


@pytest.mark.parametrize("order", ["mtf", "bandit"])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_mtf_and_bandit_find_the_all_relevant_run(order: str, seed: int) -> None:
    budget = 16
    depth = sum(GOLD[k] for k in _draw("depth", budget))
    found = sum(GOLD[k] for k in _draw(order, budget, seed=seed, batch=2))
    assert depth == 6  # a third of what depth pooling draws is relevant
    assert found >= 1.5 * depth, (order, seed, found)


def test_existing_judgments_steer_the_first_draws() -> None:
    """Runs whose top documents are judged non-relevant are not drawn from first."""
    known = {"q1": {"x0": 0, "z0": 0, "g0": 2}, "q2": {"y0": 0, "w0": 0, "h0": 3}}
    candidates = [k for k in CANDIDATES if k[1] not in known[k[0]]]
    for order in ("mtf", "bandit"):
        for seed in range(4):
            planner = HoleOrder(candidates, RUNS, known, order=order, seed=seed)
            assert planner.next_batch(2) == [("q1", "g1"), ("q2", "h1")], (order, seed)


@pytest.mark.parametrize(
    ("text", "expected"), [("10", 10), ("25%", 15), ("100%", 60), ("60", 60), ("0.5%", 0)]
)
def test_parse_hole_count(text: str, expected: int) -> None:
    if expected == 0:
        with pytest.raises(UserError, match="0 pairs of the 60"):
            parse_hole_count(text, 60)
    else:
        assert parse_hole_count(text, 60) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [("0", "budget 0 is 0 pairs of the 60"), ("61", "61 pairs, over the 60 in the pool"),
     ("150%", "90 pairs, over the 60"), ("ten", "not N or P%"), ("2.5", "whole number")],
)  # fmt: skip
def test_bad_budgets_name_the_counts(text: str, message: str) -> None:
    with pytest.raises(UserError, match=message):
        parse_hole_count(text, 60)


def test_unknown_order() -> None:
    with pytest.raises(UserError, match="unknown order 'best'"):
        HoleOrder(CANDIDATES, RUNS, {}, order="best")


def test_fusion_puts_the_documents_many_runs_rank_high_first() -> None:
    from docket.ir.formats import Run

    runs = [Run("a", {"q": ["x", "y", "z"]}), Run("b", {"q": ["y", "x", "w"]}),
            Run("c", {"q": ["y", "z", "x"]})]  # fmt: skip
    candidates = [("q", d) for d in "wxyz"]
    planner = HoleOrder(candidates, runs, {}, order="fusion")
    assert [key for _ in range(4) for key in planner.next_batch(4)] == [
        ("q", "y"), ("q", "x"), ("q", "z"), ("q", "w")]  # fmt: skip
