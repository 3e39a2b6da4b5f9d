"""Tables of ``docket bench readeval``: build counts and drops, run scores and mode comparison."""

from __future__ import annotations

from rich.table import Table

from docket.readeval.build import BuildResult
from docket.readeval.dataset import PAPER_F1
from docket.readeval.runner import ModeReport, RunReport
from docket.readeval.scoring import Counts

CAPTION = "f: needs_review counted as a flag; p: counted as a pass (TP/FP/FN as flag)"


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def build_tables(result: BuildResult) -> list[Table]:
    """Kept samples by tier and persona, and dropped samples by tier and reason."""
    header = result.dataset.header
    summary = header.summary
    personas = [p.name for p in header.config.personas]
    kept = Table(title=f"RE-AD-Eval: {summary.kept} of {summary.attempted} samples kept")
    for column in ["tier", *personas, "total"]:
        kept.add_column(column, justify="left" if column == "tier" else "right")
    for tier in header.tiers:
        row = summary.kept_by.get(tier, {})
        kept.add_row(tier, *(str(row.get(p, 0)) for p in personas), str(sum(row.values())))
    rounds = ", ".join(f"{k}: {v}" for k, v in summary.iterations.items())
    kept.caption = f"samples by rounds used: {rounds}" if rounds else None
    if summary.kept == summary.attempted:
        return [kept]
    drops = Table(title=f"dropped: {summary.attempted - summary.kept}")
    for column in ("tier", "reason", "samples"):
        drops.add_column(column, justify="right" if column == "samples" else "left")
    for tier, reasons in summary.dropped_by.items():
        for reason, count in reasons.items():
            drops.add_row(tier, reason, str(count))
    return [kept, drops]


def _score_cells(flag: Counts, passed: Counts) -> list[str]:
    return [
        _num(flag.precision),
        _num(flag.recall),
        _num(flag.f1),
        _num(passed.precision),
        _num(passed.recall),
        _num(passed.f1),
        f"{flag.tp}/{flag.fp}/{flag.fn}",
    ]


def mode_table(report: ModeReport) -> Table:
    """Precision, recall and F1 (needs_review as flag and as pass) overall, per tier, per persona."""
    latency = report.latency_ms
    title = (
        f"{report.mode}: {report.samples} samples; needs_review {report.needs_review.results} "
        f"({report.needs_review.on_injected} on the injected rule); "
        f"p50 {_num(latency['p50'], 1)} ms, p95 {_num(latency['p95'], 1)} ms; "
        f"LLM calls {report.llm_calls}"
    )
    table = Table(title=title, caption=CAPTION)
    table.add_column("group")
    for column in ("Pf", "Rf", "F1f", "Pp", "Rp", "F1p", "TP/FP/FN"):
        table.add_column(column, justify="right")
    flag, passed = report.needs_review_as_flag, report.needs_review_as_pass
    table.add_row("overall", *_score_cells(flag.overall, passed.overall))
    for by_flag, by_pass in ((flag.by_tier, passed.by_tier), (flag.by_persona, passed.by_persona)):
        table.add_section()
        for key in by_flag:
            table.add_row(key, *_score_cells(by_flag[key], by_pass[key]))
    return table


def comparison_table(report: RunReport) -> Table:
    """One row per mode: F1 both ways, needs_review, latency and calls."""
    table = Table(
        title="modes compared",
        caption=f"{CAPTION}. The RE-AD paper reports F1 {PAPER_F1}: a reference, not a target.",
    )
    for column in ("mode", "F1f", "F1p", "review", "p50 ms", "p95 ms", "calls/sample"):
        table.add_column(column, justify="left" if column == "mode" else "right")
    for mode in report.modes.values():
        table.add_row(
            mode.mode,
            _num(mode.needs_review_as_flag.overall.f1),
            _num(mode.needs_review_as_pass.overall.f1),
            str(mode.needs_review.results),
            _num(mode.latency_ms["p50"], 1),
            _num(mode.latency_ms["p95"], 1),
            _num(mode.llm_calls_per_sample, 1),
        )
    return table


def run_tables(report: RunReport) -> list[Table]:
    """A table per mode, then the comparison of modes."""
    return [*(mode_table(mode) for mode in report.modes.values()), comparison_table(report)]
