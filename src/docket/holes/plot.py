"""PNG plot of budgeted orders: dropped relevant pairs recovered against judgments spent."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path


def plot_order_curves(
    curves: Mapping[str, Sequence[int]], relevant: int, path: str | Path, title: str = ""
) -> Path:
    """One line per order: share of the ``relevant`` dropped pairs found after n judgments.

    Args:
        curves: per order, the relevant pairs recovered after each judgment (cumulative).
        relevant: the dropped relevant pairs (the 100% line).
        path: the PNG file to write.
        title: the figure's title.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for order, found in curves.items():
        shares = [n / relevant if relevant else 0.0 for n in found]
        axes.plot(range(1, len(found) + 1), shares, label=order, linewidth=1.5)
    axes.set_xlabel("judgments spent")
    axes.set_ylabel(f"dropped relevant pairs recovered (of {relevant})")
    axes.set_ylim(0, 1)
    axes.grid(alpha=0.3)
    axes.legend()
    axes.set_title(title or "Budgeted hole filling")
    figure.tight_layout()
    path = Path(path)
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
