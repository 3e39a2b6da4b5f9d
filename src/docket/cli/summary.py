"""What ``docket judge`` prints after a run: pairs, totals, one debate, where things went.

Identifiers and corpus text are printed as plain Text (never as rich markup), so square
brackets in them show as they are.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from docket.cli.common import id_column, out, value_column
from docket.cli.transcript import review_hint, transcript_view
from docket.jobs.result import JobRun
from docket.relevance.engagement import ENGAGED_TURNS, LATER_TURNS
from docket.relevance.types import Judgment, Pair

LABEL_NAMES = {1: "relevant", 0: "irrelevant", None: "-"}
MAX_ROWS = 25
"""Rows of the per-pair table; the totals always cover every pair."""


@dataclass
class Digest:
    """Everything the summary counts, gathered in one pass over lean rows of the job.

    Attributes:
        pairs: judged pairs.
        calls: stored LLM calls.
        tokens: stored prompt and completion tokens.
        reasked: stored replies that could not be read (each was asked once more).
        decided: pairs per ``decided_by``.
        grades: pairs per grade (graded judges: 0-3; empty for binary labels).
        gold: ``(gold, label)`` of automatically labelled pairs that have a gold label.
        debated: the pair worth showing: an escalation first, then the most rounds.
        later_turns, engaged_turns: debate turns after round 1, and those that engaged
            (see :mod:`docket.relevance.engagement`).
    """

    pairs: int = 0
    calls: int = 0
    tokens: int = 0
    reasked: int = 0
    decided: Counter[str] = field(default_factory=Counter)
    grades: Counter[int] = field(default_factory=Counter)
    gold: list[tuple[int, int]] = field(default_factory=list)
    debated: tuple[str, str] | None = None
    later_turns: int = 0
    engaged_turns: int = 0

    @classmethod
    def of(cls, rows: Iterable[Any]) -> Digest:
        """Digest rows with the attributes of ``runner.results.SUMMARY_COLUMNS``."""
        digest, best = cls(), (False, 0)
        for row in rows:
            digest._add(row)
            rank = (row.decided_by == "escalated", row.rounds)
            if digest.debated is None or rank > best:
                digest.debated, best = (row.qid, row.docid), rank
        return digest

    def _add(self, row: Any) -> None:
        usage = row.usage or {}
        self.pairs += 1
        self.calls += usage.get("calls", 0)
        self.tokens += usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
        self.reasked += row.parse_failures or 0
        self.later_turns += usage.get(LATER_TURNS, 0)
        self.engaged_turns += usage.get(ENGAGED_TURNS, 0)
        self.decided[row.decided_by] += 1
        if (grade := getattr(row, "grade", None)) is not None:
            self.grades[grade] += 1
        if row.gold is not None and row.label is not None:
            self.gold.append((row.gold, row.label))


def _label_text(judgment: Judgment) -> Text:
    if judgment.decided_by == "escalated":
        return Text("needs human", style="yellow")
    name = LABEL_NAMES[judgment.label]
    if judgment.grade is not None:  # a graded judge: the grade, and the label it gives
        name = f"{judgment.grade} {name}"
    return Text(name, style="green" if judgment.label == 1 else "")


def _row(pair: Pair, judgment: Judgment) -> tuple[Text | str, ...]:
    usage = judgment.usage
    tokens = usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)
    return (
        Text(pair.qid), Text(pair.docid), _label_text(judgment), judgment.decided_by,
        str(judgment.rounds), str(usage.get("calls", 0)), str(tokens),
    )  # fmt: skip


def pair_table(results: Iterable[tuple[Pair, Judgment]], title: str, total: int) -> Table:
    """One row per pair (the first :data:`MAX_ROWS` of ``total``): label, how decided,
    rounds, calls, tokens.

    qid and docid never fold or get cut, nor do labels and counts: the table has no
    vertical rules and one-word headings, so 25-character MS MARCO v2 docids fit at 80
    columns; at a narrower terminal a cell folds, it never ends in "…".
    """
    shown = list(islice(results, MAX_ROWS))  # results may stream from the store
    rows = [_row(pair, judgment) for pair, judgment in shown]
    table = Table(
        title=Text(title), box=box.SIMPLE_HEAD, padding=(0, 0),
        pad_edge=False, show_edge=False,
    )  # fmt: skip
    id_column(table, "qid", [r[0] for r in rows])
    id_column(table, "docid", [r[1] for r in rows])
    headings = ("label", "decided", "rounds", "calls", "tokens")  # one word each: no wrap
    for index, heading in enumerate(headings, start=2):
        justify = "left" if index < 4 else "right"
        value_column(table, heading, [str(r[index]) for r in rows], justify=justify)
    for row in rows:
        table.add_row(*row)
    # Never narrower than its columns' minimums plus one space between them: a terminal
    # narrower than that wraps the lines (print with crop=False) instead of rich dropping
    # whole columns.
    table.min_width = sum(c.min_width or 0 for c in table.columns) + len(table.columns) - 1
    if total > MAX_ROWS:
        table.caption = (
            f"first {MAX_ROWS} of {total} pairs; `docket export --format jsonl` lists them all"
        )
    return table


def totals_table(digest: Digest, run: JobRun) -> Table:
    """Two rows: what this run did, and what the job holds in the store.

    The caption says how the stored pairs were decided, e.g. ``decided: consensus 3``.
    """
    table = Table(title="totals")
    table.add_column("")
    for column in ("pairs", "LLM calls", "cache hits", "tokens", "re-asked"):
        table.add_column(column, justify="right")
    usage = run.usage
    table.add_row(
        "this run", str(run.outcome.judged), str(usage.calls), str(usage.cache_hits),
        str(usage.tokens), str(usage.parse_failures),
    )  # fmt: skip
    table.add_row(
        "stored", str(digest.pairs), str(digest.calls), "", str(digest.tokens),
        str(digest.reasked),
    )  # fmt: skip
    decided, grades = digest.decided, digest.grades
    table.caption = (
        "re-asked: replies that could not be read (each was asked once more)\n"
        "decided: " + ", ".join(f"{name} {decided[name]}" for name in sorted(decided))
    )
    if usage.replayed:
        table.caption += (f"\nthis run replayed {usage.replayed} calls its job paid for before "
                          "(kept in the store), and paid nothing for them")  # fmt: skip
    if grades:
        table.caption += "\ngrades: " + ", ".join(f"{g}: {grades[g]}" for g in sorted(grades))
    return table


def gold_line(gold: Sequence[tuple[int, int]]) -> str | None:
    """How the automatic labels compare with the gold labels in the input, if any."""
    from docket.relevance.metrics import class_recalls

    if not gold:
        return None
    truth, predicted = zip(*gold, strict=True)
    recalls = class_recalls(list(predicted), list(truth))
    bacc = recalls.balanced_accuracy
    bacc_text = "n/a (one class only)" if bacc is None else f"{bacc:.3f}"
    return (
        f"against the gold labels in the input: balanced accuracy {bacc_text} "
        f"over {len(gold)} automatically labelled pairs"
    )


def engagement_line(digest: Digest) -> str | None:
    """How many debate turns after round 1 engaged, if there were any."""
    if not digest.later_turns:
        return None
    share = digest.engaged_turns / digest.later_turns
    return (
        f"debate turns after round 1 that engaged: {digest.engaged_turns} of "
        f"{digest.later_turns} ({share:.0%}); the others repeated their previous turn"
    )


def print_summary(run: JobRun, db: str, *, show_transcript: bool = True) -> None:
    """Print the tables, one debated pair's transcript and where the results went.

    The job is read once in full for the totals (lean rows), and again only for the rows
    of the pair table and the one transcript shown, so a rerun of a 100,000-pair job
    prints its summary in seconds.
    """
    results, job = run.results, run.job
    digest = Digest.of(results.summary_rows())
    if digest.pairs:
        out.print(pair_table(results, title=f"job {job}", total=digest.pairs), crop=False)
        out.print(totals_table(digest, run))
    for line in (gold_line(digest.gold), engagement_line(digest)):
        if line is not None:
            out.print(line, soft_wrap=True)
    shown = results.get(digest.debated) if show_transcript and digest.debated else None
    if shown is not None and len(shown[1].transcript) > 1:
        out.print(Text("\none debate, round by round:", style="bold"))
        out.print(transcript_view(*shown))
        out.print(
            Text(f"(any pair: docket show QID DOCID --job {job} --db {db} [--json])"),
            soft_wrap=True,
        )
    out.print(
        Text(
            f"{digest.pairs} pairs in {db}: {run.outcome.judged} judged by this run, "
            f"{run.outcome.skipped} already judged before it"
        ),
        soft_wrap=True,
    )
    if run.queued:
        out.print(review_hint(db, run.queued), soft_wrap=True, markup=False)
