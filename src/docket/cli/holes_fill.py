"""``docket holes fill``: judge the unjudged pooled pairs, write completed qrels and provenance.

Flag parsing, one call of :func:`docket.holes.fill_holes`, and printing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from docket.cli.budget_flags import BatchOpt, BudgetOpt, OrderOpt, OrderSeedOpt
from docket.cli.common import console, escape, finish_run, out, print_failed, resumable
from docket.cli.ir_common import (
    CorpusOpt,
    DepthOpt,
    GradesOpt,
    GuidanceFieldOpt,
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
from docket.cli.judging_flags import RUNNING, JudgingFlags, MethodOpt, judging_command
from docket.cli.outputs import output_path
from docket.cli.progress import progress_meter
from docket.holes.ordered import BATCH
from docket.holes.run import HoleFill, fill_holes
from docket.ir.formats import count_judgments, write_qrels
from docket.ir.provenance import LEVELS, write_provenance
from docket.store.base import display_url


@judging_command(*RUNNING)
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
    guidance_field: GuidanceFieldOpt = None,
    method: MethodOpt = "dream",
    audit: Annotated[bool, typer.Option(help="also re-judge pooled judged pairs")] = False,
    whole_pool: Annotated[
        Path | None,
        typer.Option(
            "--whole-pool",
            help="re-judge the judged pooled pairs too and write the new labels alone for the "
            "whole pool to this qrels file (compare: eval systems --whole-pool-qrels)",
            callback=output_path,
        ),
    ] = None,
    job: Annotated[
        str | None, typer.Option(help="job name (default: holes-<qrels>-<method>)")
    ] = None,
    level: Annotated[
        str, typer.Option(help="labels in --out-qrels: original|automatic|reviewed")
    ] = "reviewed",
    rel_level: RelLevelOpt = 1,
    grades: GradesOpt = None,
    budget: BudgetOpt = None,
    order: OrderOpt = "depth",
    order_seed: OrderSeedOpt = 0,
    batch: BatchOpt = BATCH,
    *,
    judging: JudgingFlags,
) -> object:
    """Judge the unjudged pooled pairs; write completed qrels and provenance."""
    if level not in LEVELS:
        raise typer.BadParameter(f"use one of {', '.join(LEVELS)}", param_hint="--level")
    spec = judging.spec(method)
    with resumable(spec.settings.db), progress_meter("judging") as on_progress:
        filled = fill_holes(
            qrels, run_paths(runs, more_runs), queries, corpus, spec, depth=depth, audit=audit,
            limit=spec.limit, level=level, rel_level=rel_level, job=job, on_progress=on_progress,
            grades=parse_grades(grades), topic_field=topic_field, corpus_index=corpus_index,
            guidance_field=guidance_field,
            budget=budget, order=order, seed=order_seed, batch=batch,
            whole_pool=whole_pool is not None,
        )  # fmt: skip
    if filled.run.error is not None:
        console.print(f"[red]stopped early:[/red] {escape(filled.run.error.one_line())}")
    written = _complete_enough(filled, judging.allow_failed)
    if written:
        _write_fill(filled, out_qrels, provenance, whole_pool)
    _print_fill(filled, out_qrels, spec.settings.db, written)
    print_failed(filled.run.failed, filled.run.outcome.busy)
    if audit and written:
        out.print(
            f"audit: {len(filled.result.disagreements)} disagreements with original labels "
            f"(source 'audit' records in {escape(provenance)})"
        )
    if not written:
        _print_not_written(filled, out_qrels, provenance)
    finish_run([filled.run], judging.allow_failed)
    return filled


def _write_fill(
    filled: HoleFill, out_qrels: Path, provenance: Path, whole_pool: Path | None
) -> None:
    """Write the completed qrels, the provenance and, if asked, the whole pool's new labels."""
    # each file is written to a temporary name and renamed
    write_qrels(filled.result.completed, out_qrels)
    write_provenance(filled.result.records, provenance)
    if whole_pool is not None and filled.result.whole_pool is not None:
        write_qrels(filled.result.whole_pool, whole_pool)
        out.print(f"whole pool: {count_judgments(filled.result.whole_pool)} new labels "
                  f"written to {escape(whole_pool)}")  # fmt: skip


def _print_not_written(filled: HoleFill, out_qrels: Path, provenance: Path) -> None:
    run = filled.run
    missing = run.total - len(run.results)
    fix = "run the same command again to finish"
    if run.failed and run.error is None and not run.outcome.busy:
        fix = "fix the cause and add --retry-failed, or add --allow-failed to write without them"
    why = f"{missing} of {run.total} pairs are not judged (the judged ones are saved)"
    if run.outcome.busy:  # judged by another process, so not missing: just not ours to write
        why = (f"{run.outcome.busy} of {run.total} pairs were being judged by another process "
               "of the same job when this one ended")  # fmt: skip
        fix = "run the same command again when it has finished"
    console.print(
        f"[yellow]not written[/yellow]: {escape(out_qrels)} and {escape(provenance)}, since "
        f"{why}; {fix}",
        soft_wrap=True,
    )


def _complete_enough(filled: HoleFill, allow_failed: bool) -> bool:
    """Whether the completed qrels may be written: every pair judged, or only refused
    pairs missing and ``--allow-failed`` given. A stopped or shared run writes nothing."""
    run = filled.run
    if run.error is not None or run.outcome.busy:
        return False
    return run.complete or (allow_failed and len(run.results) + len(run.failed) >= run.total)


def _print_fill(filled: HoleFill, path: Path, db: str, written: bool) -> None:
    """One consistent summary: every count comes from the judgments after review."""
    result, outcome = filled.result, filled.run.outcome
    added = count_judgments(result.completed) - count_judgments(filled.original)
    reused = f", {outcome.skipped} already in the store" if outcome.skipped else ""
    if filled.budget is not None:
        out.print(f"budget: {filled.budget} of the holes, drawn in {filled.order} order")
    where = f"{added} labels added to {escape(path)}" if written else f"{added} labels so far"
    out.print(
        f"{filled.holes} holes at depth {filled.depth}; judged {outcome.judged} pairs now"
        f"{reused}; {where}"
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
