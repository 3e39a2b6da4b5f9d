"""``docket holes fill``: judge the unjudged pooled pairs, write completed qrels and provenance.

Flag parsing, one call of :func:`docket.jobs.fill_holes`, and printing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from docket.cli.common import console, escape, out, print_failed, resumable
from docket.cli.ir_common import (
    CorpusOpt,
    DepthOpt,
    GradesOpt,
    IndexOpt,
    MoreRuns,
    QrelsOpt,
    QueriesOpt,
    RelLevelOpt,
    RunsOpt,
    TopicFieldOpt,
    parse_grades,
    run_paths,
)
from docket.cli.judging_flags import JudgingFlags, MethodOpt, judging_command
from docket.cli.outputs import output_path
from docket.cli.progress import progress_meter
from docket.ir.formats import count_judgments, write_qrels
from docket.ir.provenance import LEVELS, write_provenance
from docket.jobs.holes import HoleFill, fill_holes
from docket.store.base import display_url


@judging_command
def fill_command(
    qrels: QrelsOpt,
    corpus: CorpusOpt,
    queries: QueriesOpt,
    out_qrels: Annotated[
        Path, typer.Option("--out-qrels", help="completed qrels (TREC)", callback=output_path)
    ],
    provenance: Annotated[
        Path, typer.Option("--provenance", help="provenance JSONL", callback=output_path)
    ],
    runs: RunsOpt = None,
    more_runs: MoreRuns = None,
    depth: DepthOpt = 10,
    corpus_index: IndexOpt = None,
    topic_field: TopicFieldOpt = "title",
    method: MethodOpt = "dream",
    audit: Annotated[bool, typer.Option(help="also re-judge pooled judged pairs")] = False,
    job: Annotated[
        str | None, typer.Option(help="job name (default: holes-<qrels>-<method>)")
    ] = None,
    level: Annotated[
        str, typer.Option(help="labels in --out-qrels: original|automatic|reviewed")
    ] = "reviewed",
    rel_level: RelLevelOpt = 1,
    grades: GradesOpt = None,
    *,
    judging: JudgingFlags,
) -> None:
    """Judge the unjudged pooled pairs; write completed qrels and provenance."""
    if level not in LEVELS:
        raise typer.BadParameter(f"use one of {', '.join(LEVELS)}", param_hint="--level")
    spec = judging.spec(method)
    with resumable(spec.settings.db), progress_meter("judging") as on_progress:
        filled = fill_holes(
            qrels, run_paths(runs, more_runs), queries, corpus, spec, depth=depth, audit=audit,
            limit=spec.limit, level=level, rel_level=rel_level, job=job, on_progress=on_progress,
            grades=parse_grades(grades), topic_field=topic_field, corpus_index=corpus_index,
        )  # fmt: skip
    if filled.run.error is not None:
        console.print(f"[red]stopped early:[/red] {escape(filled.run.error.one_line())}")
    write_qrels(filled.result.completed, out_qrels)
    write_provenance(filled.result.records, provenance)
    _print_fill(filled, out_qrels, spec.settings.db)
    print_failed(filled.run.failed, filled.run.outcome.busy)
    if audit:
        out.print(
            f"audit: {len(filled.result.disagreements)} disagreements with original labels "
            f"(source 'audit' records in {escape(provenance)})"
        )


def _print_fill(filled: HoleFill, path: Path, db: str) -> None:
    """One consistent summary: every count comes from the judgments after review."""
    result, outcome = filled.result, filled.run.outcome
    added = count_judgments(result.completed) - count_judgments(filled.original)
    reused = f", {outcome.skipped} already in the store" if outcome.skipped else ""
    out.print(
        f"{filled.holes} holes at depth {filled.depth}; judged {outcome.judged} pairs now"
        f"{reused}; {added} labels added to {escape(path)}"
    )
    out.print("decided: " + ", ".join(f"{n} {k}" for k, n in sorted(result.counts.items())))
    waiting = sum(j.label is None for j in result.judgments)
    if waiting:
        where = escape(display_url(db))
        out.print(
            f"{waiting} escalated pairs wait in the review queue "
            f"(docket review serve --db {where})",
            soft_wrap=True,
        )
    skipped = len(filled.pairs.missing_queries) + len(filled.pairs.missing_documents)
    if skipped:
        out.print(
            f"skipped {len(filled.pairs.missing_documents)} pairs with documents missing from "
            f"the corpus and {len(filled.pairs.missing_queries)} with unknown queries"
        )
