"""What ``docket judge`` prints after a run: pairs, totals, one debate, where things went.

Identifiers and corpus text are printed as plain Text (never as rich markup), so square
brackets in them show as they are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import islice

from rich.table import Table
from rich.text import Text

from docket.cli.common import id_column, out
from docket.cli.transcript import most_debated, review_hint, transcript_view
from docket.llm.usage import Usage
from docket.relevance.types import Judgment, Pair

LABEL_NAMES = {1: "relevant", 0: "irrelevant", None: "-"}
MAX_ROWS = 25
"""Rows of the per-pair table; the totals always cover every pair."""


@dataclass(frozen=True)
class RunReport:
    """What one run did, apart from what the store holds.

    Attributes:
        judged: pairs judged by this run.
        skipped: pairs that were already judged before it.
        usage: this run's LLM usage (0 calls on a rerun of a finished job).
        queued: escalated pairs in the review queue after the run.
    """

    judged: int
    skipped: int
    usage: Usage
    queued: int


def _label_text(judgment: Judgment) -> Text:
    if judgment.decided_by == "escalated":
        return Text("needs human", style="yellow")
    name = LABEL_NAMES[judgment.label]
    return Text(name, style="green" if judgment.label == 1 else "")


def pair_table(results: Sequence[tuple[Pair, Judgment]], title: str) -> Table:
    """One row per pair (at most :data:`MAX_ROWS`): label, how decided, rounds, calls, tokens.

    qid and docid never fold or get cut: the other columns give way.
    """
    shown = list(islice(results, MAX_ROWS))  # results may stream from the store
    table = Table(title=Text(title))
    id_column(table, "qid", [pair.qid for pair, _ in shown])
    id_column(table, "docid", [pair.docid for pair, _ in shown])
    for column in ("label", "decided by"):
        table.add_column(column)
    for column in ("rounds", "LLM calls", "tokens"):
        table.add_column(column, justify="right")
    for pair, judgment in shown:
        usage = judgment.usage
        table.add_row(
            Text(pair.qid),
            Text(pair.docid),
            _label_text(judgment),
            judgment.decided_by,
            str(judgment.rounds),
            str(usage.get("calls", 0)),
            str(usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)),
        )
    if len(results) > MAX_ROWS:
        table.caption = (
            f"first {MAX_ROWS} of {len(results)} pairs; "
            "`docket export --format jsonl` lists them all"
        )
    return table


def totals_table(results: Sequence[tuple[Pair, Judgment]], run: RunReport) -> Table:
    """Two rows: what this run did, and what the job holds in the store.

    The caption says how the stored pairs were decided, e.g. ``decided: consensus 3``.
    """
    # One pass: results may be read from the store (a 100,000-pair job is not in memory).
    stored_calls = stored_tokens = turns = first_failed = 0
    decided: Counter[str] = Counter()
    for _, j in results:
        decided[j.decided_by] += 1
        stored_calls += j.usage.get("calls", 0)
        stored_tokens += j.usage.get("prompt_tokens", 0) + j.usage.get("completion_tokens", 0)
        turns += len(j.transcript)
        first_failed += sum(1 for turn in j.transcript if turn.get("parse_failures", 0) >= 1)
    table = Table(title="totals")
    table.add_column("")
    for column in ("pairs", "LLM calls", "cache hits", "tokens", "re-asked"):
        table.add_column(column, justify="right")
    usage = run.usage
    table.add_row(
        "this run",
        str(run.judged),
        str(usage.calls),
        str(usage.cache_hits),
        str(usage.tokens),
        str(usage.parse_failures),
    )
    table.add_row(
        "stored", str(len(results)), str(stored_calls), "", str(stored_tokens),
        f"{first_failed} of {turns}",
    )  # fmt: skip
    table.caption = (
        "re-asked: replies that could not be read and were asked once more\n"
        "decided: " + ", ".join(f"{name} {decided[name]}" for name in sorted(decided))
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
    results: Sequence[tuple[Pair, Judgment]],
    job: str,
    db: str,
    run: RunReport,
    *,
    show_transcript: bool = True,
) -> None:
    """Print the tables, one debated pair's transcript and where the results went."""
    if results:
        out.print(pair_table(results, title=f"job {job}"))
        out.print(totals_table(results, run))
    if (line := gold_line(results)) is not None:
        out.print(line, soft_wrap=True)
    shown = most_debated(results) if show_transcript else None
    if shown is not None and len(shown[1].transcript) > 1:
        out.print(Text("\none debate, round by round:", style="bold"))
        out.print(transcript_view(*shown))
        out.print(
            Text(f"(any pair: docket show QID DOCID --job {job} --db {db} [--json])"),
            soft_wrap=True,
        )
    out.print(
        Text(
            f"{len(results)} pairs in {db}: {run.judged} judged by this run, "
            f"{run.skipped} already judged before it"
        ),
        soft_wrap=True,
    )
    if run.queued:
        out.print(review_hint(db, run.queued), soft_wrap=True, markup=False)
