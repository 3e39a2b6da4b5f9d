"""How a plan and a budget stop are printed (shared by ``docket plan`` and every judging command)."""

from __future__ import annotations

import json

from rich.table import Table

from docket.agreement import shown
from docket.cli.common import escape, out
from docket.errors import ConfigError
from docket.jobs.bill.figures import JobPlan, Range
from docket.jobs.bill.pilot import PilotReport
from docket.jobs.result import JobRun
from docket.store import Store
from docket.store.spend import notes_of, spend_of
from docket.store.tables import Job


def print_plan(result: JobPlan) -> None:
    """The plan as a table of fewest / expected / most, then its notes."""
    out.print(
        f"plan for job [bold]{escape(result.job)}[/bold] ({escape(result.method)}, "
        f"{escape(result.model)}): {result.todo} pairs to judge "
        f"({result.done} of {result.pairs} already in the store)",
        soft_wrap=True,
    )
    expected = "expected*" if result.assumed else "expected"
    table = Table("", "fewest", expected, "most")
    rows: list[tuple[str, Range | None, str]] = [
        ("LLM calls", result.calls, "{:,.0f}"),
        ("prompt tokens", result.prompt_tokens, "{:,.0f}"),
        ("completion tokens", result.completion_tokens, "{:,.0f}"),
        ("cached prefix tokens", result.cached_tokens, "{:,.0f}"),
        ("cost (USD)", result.cost, "{:,.2f}"),
        ("wall time", result.wall_s, "time"),
        ("escalations", result.escalations, "{:,.0f}"),
        ("reviewer hours", result.review_hours, "{:,.1f}"),
    ]
    for label, values, fmt in rows:
        if values is None:
            table.add_row(label, "-", "-", "-")
        else:
            table.add_row(label, *(_fmt(v, fmt) for v in values))
    out.print(table)
    if result.assumed:
        out.print(f"  * expected assumes {escape(result.assumed)}", soft_wrap=True)
    for note in result.notes:
        out.print(f"  note: {escape(note)}", soft_wrap=True)


def _fmt(value: float, fmt: str) -> str:
    if fmt != "time":
        return fmt.format(value)
    if value < 120:
        return f"{value:.0f} s"
    if value < 7200:
        return f"{value / 60:.0f} min"
    return f"{value / 3600:.1f} h"


def print_pilot(report: PilotReport | None) -> None:
    """The pilot's measures per pair and its projection for the rest of the job."""
    if report is None:
        return
    table = Table("pilot", "per pair (95% interval)", f"projected for {report.remaining} pairs")
    for name in ("calls", "prompt_tokens", "completion_tokens", "escalations",
                 "parse_failures", "retries", "cost"):  # fmt: skip
        per, total = report.per_pair[name], report.projected[name]
        fmt = "{:,.4f}" if name == "cost" else "{:,.0f}"
        table.add_row(name.replace("_", " "), _span(per, "{:,.3g}"), _span(total, fmt))
    wall = report.projected["wall_s"]
    table.add_row("wall time", f"{report.latency_s:.2f} s a call", _span(wall, "time"))
    for name, heading in (("bacc", "balanced accuracy"), ("kappa", "Cohen's kappa")):
        value = getattr(report, name)
        if value is not None:
            table.add_row(f"{heading}, pilot labels vs gold", _figure(value, report.scored), "")
    out.print(table)
    for note in report.notes:
        out.print(f"  note: {escape(note)}", soft_wrap=True)


def _figure(value: Range, n: int) -> str:
    """An agreement figure with its interval and n; too few pairs or undefined: no number."""
    text = shown(value.expected, n, ".2f")
    return text if text.startswith(("n/a", "too few")) else f"{_span(value, '{:.2f}')} (n={n})"


def _span(value: Range, fmt: str) -> str:
    low, mid, high = (_fmt(v, fmt) for v in value)
    return f"{mid} ({low} - {high})"


def print_planned_vs_actual(run: object) -> None:
    """The run's plan (made at its start) against what it did: calls, tokens, cost, time."""
    if not isinstance(run, JobRun) or run.plan is None or not run.usage.calls:
        return
    plan, usage = run.plan, run.usage
    price = plan.price.price
    cost = price.cost(usage.prompt_tokens, usage.cached_prompt_tokens, usage.completion_tokens)
    rows = [("LLM calls", plan.calls.expected, usage.calls, "{:,.0f}"),
            ("tokens", plan.tokens.expected, usage.tokens, "{:,.0f}"),
            ("cost (USD)", plan.cost.expected, cost, "{:,.4f}")]  # fmt: skip
    if plan.wall_s is not None:
        rows.append(("wall time", plan.wall_s.expected, run.elapsed_s, "time"))
    table = Table("planned vs actual", "planned", "actual", "error")
    for label, planned, actual, fmt in rows:
        error = f"{(actual - planned) / planned:+.0%}" if planned else "-"
        table.add_row(label, _fmt(planned, fmt), _fmt(actual, fmt), error)
    out.print(table)


def show_job_bill(store: Store, job: str, as_json: bool) -> None:
    """A job's spend (all runs, all processes) and the plans and pilots kept with it."""
    with store.read_session() as session:
        if session.get(Job, job) is None:
            raise ConfigError(f"no job '{job}' in the store", hint="docket export lists the jobs")
        spend, notes = spend_of(session, job), notes_of(session, job)
    if as_json:
        data = {"job": job, "spend": spend, "notes": [{"kind": k, **d} for k, d in notes]}
        out.print_json(json.dumps(data))
        return
    out.print(f"job {escape(job)}: spend counted for caps: {spend['calls']:,.0f} calls, "
              f"{spend['tokens']:,.0f} tokens, ${spend['cost']:,.4f}, "
              f"{spend['escalations']:,.0f} escalations", soft_wrap=True)  # fmt: skip
    for kind, data in notes:
        if kind == "plan":
            calls, cost = data["calls"], data["cost"]
            out.print(f"plan: {data['todo']} pairs, {calls['expected']:,.0f} calls "
                      f"({calls['low']:,.0f}-{calls['high']:,.0f}), ${cost['expected']:,.4f}",
                      soft_wrap=True)  # fmt: skip
        elif kind == "pilot":
            per = data["per_pair"]
            kappa, scored = data.get("kappa"), data.get("scored", 0)
            extra = f", kappa {shown(kappa['expected'], scored, '.2f')}" if kappa else ""
            out.print(f"pilot: {data['pairs']} pairs, {per['calls']['expected']:.2f} calls "
                      f"and {per['escalations']['expected']:.0%} escalated per pair{extra}",
                      soft_wrap=True)  # fmt: skip
