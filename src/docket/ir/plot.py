"""PNG plot of system rank shifts (matplotlib, Agg backend, no display needed)."""

from __future__ import annotations

from pathlib import Path

from docket.errors import UserError
from docket.ir.evaluate import SystemsReport


def plot_rank_shifts(report: SystemsReport, path: str | Path) -> Path:
    """Draw a slope chart: each system's rank before (left) and after (right).

    Lines of systems that moved up are green, down red, unchanged grey.

    Args:
        report: a report with a shift variant (completed or condensed qrels).
        path: the PNG file to write.

    Raises:
        UserError: the report has nothing to compare against.
    """
    if report.shift_variant is None:
        raise UserError(
            "no ranking to compare with", hint="pass --completed-qrels or keep condensed lists"
        )
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    before, after = report.ranks["original"], report.ranks[report.shift_variant]
    n = len(before)
    figure, axes = plt.subplots(figsize=(6, max(3.0, 0.32 * n + 1.5)))
    for name in report.systems():
        shift = report.shifts[name]
        colour = "tab:green" if shift > 0 else "tab:red" if shift < 0 else "tab:grey"
        axes.plot([0, 1], [before[name], after[name]], color=colour, marker="o", linewidth=1.5)
        axes.text(
            -0.04, before[name], f"{name}  {before[name]}", ha="right", va="center", fontsize=8
        )
        label = f"{after[name]}  {name}" + (f" ({shift:+d})" if shift else "")
        axes.text(1.04, after[name], label, ha="left", va="center", fontsize=8)
    axes.set_xlim(-0.9, 1.5)
    axes.set_ylim(n + 0.5, 0.5)
    axes.set_xticks([0, 1], ["original", report.shift_variant.replace("_", " ")])
    axes.set_yticks([])
    axes.set_title(f"System ranks by {report.primary}")
    for side in ("left", "right", "top"):
        axes.spines[side].set_visible(False)
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
