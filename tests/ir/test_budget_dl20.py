"""Budgeted orders on the real TREC DL20 qrels and six runs, with the oracle judge."""

from __future__ import annotations

from pathlib import Path

from docket.holes import simulate_orders
from docket.holes.simulate import plan_simulation
from docket.ir.formats import read_qrels, read_runs
from docket.jobs import JobSpec

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "dl20"


def test_every_order_recovers_everything_at_full_budget_and_prefixes_agree(
    tmp_path: Path,
) -> None:
    runs = sorted(DATA.glob("run.*.txt"))
    report = simulate_orders(
        DATA / "qrels.dl20.txt", runs, spec=JobSpec.of(db=str(tmp_path / "o.db")),
        budgets=("10%", "50%", "100%"), fraction=0.05, seed=3, depth=10, oracle=True,
    )  # fmt: skip
    assert report.calls == 0 and report.method == "oracle"
    assert 0 < report.relevant < report.dropped
    for order, curve in report.curves.items():
        assert len(curve) == report.dropped
        assert all(0 <= b - a <= 1 for a, b in zip([0, *curve], curve, strict=False))
        points = {p.budget: p for p in report.points if p.order == order}
        assert [points[b].recovered for b in report.budgets] == [
            curve[b - 1] for b in report.budgets
        ]
        full = points[report.dropped]
        assert full.recovered == report.relevant and full.share == 1.0
    taus = {p.tau for p in report.points if p.budget == report.dropped}
    assert len(taus) == 1  # the same refilled qrels whatever the order
    # the drop is the one holes simulate makes, restricted to the pooled pairs
    qrels = read_qrels(DATA / "qrels.dl20.txt")
    _, dropped = plan_simulation(qrels, read_runs(runs), 0.05, 3, 10)
    assert len(dropped) == report.dropped
