"""The bAcc-vs-escalation PNG of ``docket eval methods`` (matplotlib, Agg, no display).

Methods often land on the same point (``single`` and ``majority`` at 0% escalation with
the same accuracy). Every method therefore gets its own marker shape, hollow, and a size
that shrinks with its position, so coincident points nest instead of hiding each other.
Setting labels (``R=2``, ``budget=12.5%``) are placed greedily: each takes the first of
a few offsets around its point whose box overlaps no label placed before it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from docket.relevance.evaluate import CurvePoint, EvalReport

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from docket.relevance.metrics import MethodMetrics

MARKERS = ("o", "s", "^", "D", "v", "P", "X")
# Offsets in points, tried in order: right-up, right-down, left-up, left-down, above, below.
OFFSETS = ((6, 4), (6, -12), (-8, 4), (-8, -12), (0, 10), (0, -18), (12, 14), (12, -24))


def _points(report: EvalReport, method: str) -> list[CurvePoint]:
    metrics = report.metrics[method]
    single = CurvePoint(method, "", 0, metrics.escalation_rate, metrics.balanced_accuracy)
    points = report.curves.get(method) or [single]
    return [p for p in points if p.balanced_accuracy is not None]


def _label_texts(points: list[CurvePoint]) -> dict[tuple[float, float], str]:
    # Settings that land on the same point (R=1, 2 and 3 often do) share one label.
    labels: dict[tuple[float, float], list[str]] = {}
    for p in points:
        if p.setting:
            key = (round(100 * p.escalation_rate, 6), round(100 * (p.balanced_accuracy or 0), 6))
            labels.setdefault(key, []).append(p.setting)
    return {key: ", ".join(settings) for key, settings in labels.items()}


def legend_label(metrics: MethodMetrics) -> str:
    """``dream: 40 escalated, answered by gold`` / ``single: none escalated``."""
    if not metrics.escalated:
        return f"{metrics.method}: none escalated"
    if not metrics.unresolved:
        return f"{metrics.method}: {metrics.escalated} escalated, answered by {metrics.answered_by}"
    return (
        f"{metrics.method}: {metrics.escalated} escalated, {metrics.answered} answered by "
        f"{metrics.answered_by}, {metrics.unresolved} left out"
    )


def _annotate(axes: Any, text: str, xy: tuple[float, float], offset: tuple[int, int]) -> Any:
    # A light box behind the text keeps curves from running through it.
    return axes.annotate(
        text, xy, xytext=offset, textcoords="offset points", fontsize=7, zorder=10,
        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85},
    )  # fmt: skip


def _place(axes: Any, renderer: Any, xy: tuple[float, float], text: str, taken: list) -> None:
    """Annotate ``xy`` at the first offset whose box overlaps no box in ``taken``."""
    for dx, dy in OFFSETS:
        note = _annotate(axes, text, xy, (dx, dy))
        box = note.get_window_extent(renderer).expanded(1.05, 1.15)
        if not any(box.overlaps(other) for other in taken):
            taken.append(box)
            return
        note.remove()
    note = _annotate(axes, text, xy, OFFSETS[0])
    taken.append(note.get_window_extent(renderer))


def plot_curves(report: EvalReport, path: str | Path) -> Path:
    """Draw balanced accuracy against escalation rate for every method as a PNG; return the path."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    build_figure(report).savefig(out, dpi=120, bbox_inches="tight")
    return out


def build_figure(report: EvalReport) -> Figure:
    """The figure of :func:`plot_curves`, with its labels placed.

    Curves for methods with one (DREAM rounds, LARA budgets); single points for the
    others. The legend says, per method, how its escalations were answered.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7.2, 4.8))
    canvas = FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    placed: list[tuple[tuple[float, float], str]] = []
    for i, method in enumerate(report.metrics):
        points = _points(report, method)
        xs = [100 * p.escalation_rate for p in points]
        ys = [100 * (p.balanced_accuracy or 0) for p in points]
        axes.plot(
            xs,
            ys,
            marker=MARKERS[i % len(MARKERS)],
            markersize=max(4, 13 - 3 * i),
            fillstyle="none",
            markeredgewidth=1.8,
            linestyle="-" if len(points) > 1 else "",
            label=legend_label(report.metrics[method]),
            zorder=3 + i,  # later (smaller) markers on top of earlier (larger) ones
        )
        placed += list(_label_texts(points).items())
    _finish(axes, report)
    canvas.draw()  # fixes the layout so label boxes can be measured
    renderer = canvas.get_renderer()
    taken = [axes.get_legend().get_window_extent(renderer)]
    for xy, text in placed:
        _place(axes, renderer, xy, text, taken)
    return figure


def _finish(axes: Any, report: EvalReport) -> None:
    axes.set_xlabel("escalation rate (% of pairs sent to humans)")
    axes.set_ylabel("balanced accuracy (%)")
    axes.set_title(f"Relevance methods on {report.pairs} pairs")
    axes.grid(alpha=0.3)
    axes.margins(x=0.12, y=0.15)
    axes.legend(loc="lower right", fontsize=8, title="method: escalations and who answered them")
