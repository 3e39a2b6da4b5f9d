"""Tables for ``docket verify``: batch summary by rule and tier, feedback and flag statistics."""

from __future__ import annotations

import textwrap
from collections import Counter
from statistics import median
from typing import Any

from rich.table import Table

from docket.adherence.rules import RuleSet
from docket.adherence.verify.verdict import Verdict
from docket.cli.common import escape, id_column, value_column

STATUSES = ("pass", "fail", "needs_review")
RULE_TEXT = 120
"""Characters of a rule's text the summary shows at most (shortened between words)."""


def _counts(verdicts: list[Verdict]) -> tuple[dict[str, Counter[str]], dict[str, Counter[str]]]:
    by_rule: dict[str, Counter[str]] = {}
    by_tier: dict[str, Counter[str]] = {}
    for verdict in verdicts:
        for result in verdict.results:
            by_rule.setdefault(result.rule_id, Counter())[result.status] += 1
            by_tier.setdefault(result.tier, Counter())[result.status] += 1
    return by_rule, by_tier


def _tier_times(verdicts: list[Verdict]) -> dict[str, tuple[float, int]]:
    walls: dict[str, list[float]] = {}
    calls: Counter[str] = Counter()
    for verdict in verdicts:
        for tier, timing in verdict.tiers.items():
            walls.setdefault(tier, []).append(timing.wall_ms)
            calls[tier] += timing.calls
    return {tier: (median(values), calls[tier]) for tier, values in walls.items()}


def summary_tables(ruleset: RuleSet, verdicts: list[Verdict]) -> list[Table]:
    """A table per rule and a table per tier (counts of pass/fail/needs_review, timing)."""
    by_rule, by_tier = _counts(verdicts)
    rules = Table(title=f"{len(verdicts)} records against {ruleset.name} ({ruleset.version})")
    id_column(rules, "rule", [rule.id for rule in ruleset.rules])
    value_column(rules, "tier", [rule.tier for rule in ruleset.rules])
    for status in STATUSES:
        value_column(rules, status, justify="right")
    rules.add_column("text")  # wraps at words
    for rule in ruleset.rules:
        counts = by_rule.get(rule.id, Counter())
        text = textwrap.shorten(rule.text, RULE_TEXT, placeholder=" …")  # cut between words
        rules.add_row(escape(rule.id), rule.tier, *(str(counts[s]) for s in STATUSES), escape(text))
    tiers = Table(title="by tier")
    for column in ("tier", *STATUSES, "LLM calls", "median wall ms"):
        tiers.add_column(column, justify="left" if column == "tier" else "right")
    times = _tier_times(verdicts)
    for tier in sorted(set(by_tier) | set(times)):
        counts = by_tier.get(tier, Counter())
        wall, calls = times.get(tier, (0.0, 0))
        tiers.add_row(tier, *(str(counts[s]) for s in STATUSES), str(calls), f"{wall:.1f}")
    return [rules, tiers]


def _rate(row: dict[str, Any]) -> str:
    rate = row.get("accepted_rate")
    return "–" if rate is None else f"{rate:.0%}"


def stats_tables(by_rule: list[dict[str, Any]], by_tier: list[dict[str, Any]]) -> list[Table]:
    """Accepted-and-fixed rate per tier and per rule."""
    tables = []
    for title, rows, key in (("by tier", by_tier, "tier"), ("by rule", by_rule, "rule_id")):
        table = Table(title=f"annotator feedback {title}")
        for column in (
            key.replace("_id", ""),
            "tier",
            "flags",
            "accepted",
            "dismissed",
            "accepted rate",
        ):
            table.add_column(column, justify="left" if column in ("rule", "tier") else "right")
        for row in rows:
            first = row[key] if key != "tier" else row["tier"]
            table.add_row(
                escape(first),
                row["tier"],
                str(row["flags"]),
                str(row["accepted"]),
                str(row["dismissed"]),
                _rate(row),
            )
        tables.append(table)
    return tables


def flag_tables(by_rule: list[dict[str, Any]], by_annotator: list[dict[str, Any]]) -> list[Table]:
    """Flag rate and fixes in later updates, per rule and per annotator (every saved run)."""
    tables = []
    for title, rows, first in (("rule", by_rule, "rule"), ("annotator", by_annotator, "annotator")):
        table = Table(title=f"flags by {title} (not_yet is no flag)")
        columns = [first, *(["tier"] if rows is by_rule else [])]
        columns += ["checked", "flags", "flag rate", "flagged items", "fixed in an update"]
        for column in columns:
            table.add_column(column, justify="left" if column in (first, "tier") else "right")
        for row in rows:
            rate = row["flag_rate"]
            cells = [escape(row["key"]), *([row["tier"]] if rows is by_rule else [])]
            cells += [
                str(row["checked"]),
                str(row["flags"]),
                "–" if rate is None else f"{rate:.0%}",
            ]
            cells += [str(row["flagged_items"]), str(row["fixed"])]
            table.add_row(*cells)
        tables.append(table)
    return tables
