"""Grade confusion heatmaps of label sets against gold (matplotlib, Agg backend).

One label set gives one annotated heatmap; several give a grid of small multiples in
the order of the report (best headline first), each titled with its name and kappa.
Cells are shaded by the share of the gold row, so label sets of different sizes and
gold grades of different frequency read alike; the counts are written in the cells.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from docket.ir.label_agreement import LabelAgreement, LabelsReport

ANNOTATE_UP_TO = 12
"""Above this many panels the cells are not annotated (the digits would not fit)."""


def _row_shares(confusion: list[list[int]]) -> np.ndarray:
    table = np.asarray(confusion, dtype=float)
    totals = table.sum(axis=1, keepdims=True)
    return np.divide(table, totals, out=np.zeros_like(table), where=totals > 0)


def _panel(axes: Any, result: LabelAgreement, grades: list[int], annotate: bool) -> Any:
    image = axes.imshow(_row_shares(result.confusion), cmap="Blues", vmin=0.0, vmax=1.0)
    axes.set_xticks(range(len(grades)), [str(g) for g in grades], fontsize=7)
    axes.set_yticks(range(len(grades)), [str(g) for g in grades], fontsize=7)
    kappa, headline = (
        f"{v:.3f}" if v is not None else "-" for v in (result.kappa, result.headline)
    )
    axes.set_title(f"{result.name}\nkappa {kappa}, >={result.rel_level}: {headline}", fontsize=8)
    if annotate:
        shares = _row_shares(result.confusion)
        for (row, col), count in np.ndenumerate(np.asarray(result.confusion)):
            colour = "white" if shares[row, col] > 0.6 else "black"
            axes.text(col, row, str(count), ha="center", va="center", fontsize=7, color=colour)
    return image


def plot_confusions(report: LabelsReport, path: str | Path) -> Path:
    """Draw the grade confusion matrix of every label set (rows gold, columns the label set).

    Args:
        report: the report of :func:`docket.ir.label_agreement.compare_labels`.
        path: the PNG file to write.

    Returns:
        The path written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = report.results
    grades = list(range(report.scale[0], report.scale[1] + 1))
    columns = math.ceil(math.sqrt(len(results)))
    rows = math.ceil(len(results) / columns)
    size = 4.2 if len(results) == 1 else 2.3
    figure, grid = plt.subplots(
        rows, columns, figsize=(size * columns + 0.8, size * rows + 0.4), squeeze=False
    )
    image = None
    for axes, result in zip(grid.flat, results, strict=False):
        image = _panel(axes, result, grades, len(results) <= ANNOTATE_UP_TO)
    for axes in list(grid.flat)[len(results) :]:
        axes.set_visible(False)
    for axes in grid[:, 0]:
        axes.set_ylabel("gold grade", fontsize=8)
    for axes in grid[-1, :]:
        axes.set_xlabel("label grade", fontsize=8)
    figure.colorbar(image, ax=grid.ravel().tolist(), shrink=0.6, label="share of gold row")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
