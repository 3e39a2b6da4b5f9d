"""``docket holes simulate --budget``: the printing of budgeted-order simulations."""

from __future__ import annotations

from rich.table import Table

from docket.cli.common import escape, out
from docket.cli.ir_common import fmt
from docket.holes.order_sim import OrderSimulation


def split_list(text: str) -> list[str]:
    """``"a,b c"`` -> ``["a", "b", "c"]``."""
    return [part for part in text.replace(",", " ").split() if part]


def print_budget(report: OrderSimulation) -> None:
    """A table per order and budget, relative to ``depth`` when it was measured."""
    out.print(
        f"dropped {report.dropped} judged pairs ({report.relevant} relevant; fraction "
        f"{report.fraction}, seed {report.seed}); judge {escape(report.method)}, "
        f"{report.calls} LLM calls (job {escape(report.job)})"
    )
    depth = {p.budget: p.recovered for p in report.points if p.order == "depth"}
    table = Table(title=f"Relevant pairs recovered and Kendall's tau ({report.measure})")
    for column in ("order", "budget", "judged", "recovered", "share", "x depth", "tau", "tau_AP"):
        table.add_column(column, justify="left" if column == "order" else "right")
    for point in report.points:
        ratio = point.recovered / depth[point.budget] if depth.get(point.budget) else None
        table.add_row(
            point.order, str(point.budget), str(point.judged), str(point.recovered),
            fmt(point.share), fmt(ratio, 2), fmt(point.tau), fmt(point.tau_ap),
        )  # fmt: skip
    out.print(table)
