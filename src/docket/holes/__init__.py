"""Hole work above the job API: fill, simulate and order the judging of unjudged pooled pairs.

Finding holes and evaluating runs stay in :mod:`docket.ir`; this package judges them
through :func:`docket.jobs.run_job`:

- :func:`fill_holes` judges the holes of a benchmark (all, or a hole budget in an order)
  and composes completed qrels with provenance (:mod:`docket.holes.run`);
- :func:`simulate_holes` drops judged pairs, judges them again and scores the refill;
- :func:`simulate_orders` measures the orders of :class:`HoleOrder` (``depth``, ``mtf``,
  ``bandit``) at several hole budgets (:mod:`docket.holes.order_sim`);
- :class:`OracleJudge` judges a dropped pair with its own gold label (simulations only).

>>> from docket.holes import fill_holes
>>> filled = fill_holes("qrels.txt", ["run1", "run2"], "irds:msmarco-passage/trec-dl-2020",
...                     "irds:msmarco-passage", depth=10)  # doctest: +SKIP
"""

from docket.holes.fill import FillResult, PairSet, build_pairs, summarize_fill
from docket.holes.oracle import OracleJudge
from docket.holes.order import ORDERS, HoleOrder, parse_hole_count
from docket.holes.order_sim import OrderPoint, OrderSimulation, simulate_orders
from docket.holes.ordered import OrderedRun, judge_in_order
from docket.holes.run import HoleFill, HoleSimulation, complete_qrels, fill_holes, simulate_holes
from docket.holes.simulate import SimulationReport, drop_judgments

__all__ = [
    "ORDERS",
    "FillResult",
    "HoleFill",
    "HoleOrder",
    "HoleSimulation",
    "OracleJudge",
    "OrderPoint",
    "OrderSimulation",
    "OrderedRun",
    "PairSet",
    "SimulationReport",
    "build_pairs",
    "complete_qrels",
    "drop_judgments",
    "fill_holes",
    "judge_in_order",
    "parse_hole_count",
    "simulate_holes",
    "simulate_orders",
    "summarize_fill",
]
