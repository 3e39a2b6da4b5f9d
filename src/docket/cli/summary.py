"""The summary table printed after a judging run."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from itertools import islice

from rich.table import Table

from docket.cli.common import out
from docket.relevance.types import Judgment, Pair

LABEL_NAMES = {1: "relevant", 0: "irrelevant", None: "-"}
MAX_ROWS = 50
"""Pairs shown one per row; a larger job is summarised by the totals (export has all)."""


def _label_text(judgment: Judgment) -> str:
    if judgment.decided_by == "escalated":
        return "[yellow]needs human[/yellow]"
    name = LABEL_NAMES[judgment.label]
    return f"[green]{name}[/green]" if judgment.label == 1 else name


def pair_table(results: Sequence[tuple[Pair, Judgment]], title: str) -> Table:
    """One row per pair: label, how it was decided, rounds, calls, tokens."""
    shown = list(islice(results, MAX_ROWS + 1))
    more = len(results) - MAX_ROWS if len(shown) > MAX_ROWS else 0
    caption = f"the first {MAX_ROWS} pairs; {more} more in docket export" if more else None
    table = Table(title=title, caption=caption)
    for column in ("qid", "docid", "label", "decided by", "rounds", "LLM calls", "tokens"):
        table.add_column(
            column, justify="right" if column in ("rounds", "LLM calls", "tokens") else "left"
        )
    for pair, judgment in shown[:MAX_ROWS]:
        usage = judgment.usage
        table.add_row(
            pair.qid,
            pair.docid,
            _label_text(judgment),
            judgment.decided_by,
            str(judgment.rounds),
            str(usage.get("calls", 0)),
            str(usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)),
        )
    return table


def totals_table(results: Sequence[tuple[Pair, Judgment]]) -> Table:
    """How many pairs were decided which way, with total calls and tokens."""
    decided = Counter(j.decided_by for _, j in results)
    calls = sum(j.usage.get("calls", 0) for _, j in results)
    tokens = sum(
        j.usage.get("prompt_tokens", 0) + j.usage.get("completion_tokens", 0) for _, j in results
    )
    parse_failures = sum(j.parse_failures for _, j in results)
    retries = sum(j.usage.get("retries", 0) for _, j in results)
    table = Table(title="totals")
    table.add_column("pairs", justify="right")
    for name in sorted(decided):
        table.add_column(name, justify="right")
    for column in ("LLM calls", "tokens", "parse failures", "retries"):
        table.add_column(column, justify="right")
    table.add_row(
        str(len(results)),
        *(str(decided[n]) for n in sorted(decided)),
        str(calls),
        str(tokens),
        str(parse_failures),
        str(retries),
    )
    return table


def gold_line(results: Sequence[tuple[Pair, Judgment]]) -> str | None:
    """How the automatic labels compare with the gold labels in the input, if any."""
    from docket.relevance.metrics import class_recalls

    decided = [
        (p.label, j.label) for p, j in results if p.label is not None and j.label is not None
    ]
    if not decided:
        return None
    gold, predicted = zip(*decided, strict=True)
    recalls = class_recalls(list(predicted), list(gold))
    bacc = recalls.balanced_accuracy
    bacc_text = "n/a (one class only)" if bacc is None else f"{bacc:.3f}"
    return (
        f"against the gold labels in the input: balanced accuracy {bacc_text} "
        f"over {len(decided)} automatically labelled pairs"
    )


def print_summary(
    results: Sequence[tuple[Pair, Judgment]], job: str, db: str, *, skipped: int, queued: int
) -> None:
    """Print both tables and where the results went."""
    if results:
        out.print(pair_table(results, title=f"job {job}"))
        out.print(totals_table(results))
    if (line := gold_line(results)) is not None:
        out.print(line, soft_wrap=True)
    out.print(
        f"{len(results)} pairs in {db} ({skipped} already judged before this run); "
        f"{queued} escalated pairs in the review queue",
        soft_wrap=True,
    )
