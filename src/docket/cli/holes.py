"""``docket holes``: find unjudged pooled documents, fill them, compose qrels, simulate holes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from docket.cli.common import console, model_factory, out, pairs_at_once, resumable
from docket.cli.ir_common import (
    GradesOpt,
    MoreRuns,
    QrelsOpt,
    RelLevelOpt,
    RunsOpt,
    fmt,
    load_qrels,
    load_runs,
    write_json,
)
from docket.config import Settings, load_settings
from docket.ir.corpus import open_corpus
from docket.ir.fill import build_pairs, summarize_fill
from docket.ir.formats import count_judgments, read_queries, write_qrels
from docket.ir.holes import HoleReport, find_holes, pool
from docket.ir.provenance import LEVELS, compose_qrels, read_provenance, write_provenance
from docket.ir.simulate import simulate_holes
from docket.relevance.types import Judge, Pair

app = typer.Typer(
    help="Holes in IR benchmarks: find, fill and simulate unjudged documents.", no_args_is_help=True
)

DepthOpt = Annotated[int, typer.Option(min=1, help="pooling depth k (Hole@k)")]
CorpusOpt = Annotated[str, typer.Option("--corpus", help="corpus .jsonl/.tsv or irds:<id>")]
IndexOpt = Annotated[
    Path | None, typer.Option(help="SQLite index of the corpus (default: user cache)")
]
QueriesOpt = Annotated[str, typer.Option("--queries", help="queries .tsv/.jsonl or irds:<id>")]
MethodOpt = Annotated[str, typer.Option(help="dream | single | lara | majority")]
ModelOpt = Annotated[str | None, typer.Option(help="model name (default: local)")]
RoundsOpt = Annotated[int, typer.Option(help="debate rounds R")]
AdjudicatorOpt = Annotated[
    str | None, typer.Option(help="LLM adjudicator model instead of a human")
]
ConcurrencyOpt = Annotated[int | None, typer.Option(help="pairs judged at once")]
CacheOpt = Annotated[str | None, typer.Option(help="response cache file, or 'off'")]


@app.command("find")
def find_command(
    qrels: QrelsOpt,
    runs: RunsOpt = None,
    more_runs: MoreRuns = None,
    depth: DepthOpt = 10,
    corpus: Annotated[str | None, typer.Option(help="corpus to check the holes against")] = None,
    corpus_index: IndexOpt = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="write the holes as JSONL")] = None,
    report: Annotated[Path | None, typer.Option(help="write per-system and per-query JSON")] = None,
    grades: GradesOpt = None,
) -> None:
    """Pool the top-k of every run, list unjudged pairs and report Hole@k."""
    original = load_qrels(qrels, grades)
    systems = load_runs(runs, more_runs)
    lookup = open_corpus(corpus, corpus_index) if corpus else None
    result = find_holes(original, systems, depth, lookup)
    if out_path is not None:
        _write_holes(result, out_path)
    if report is not None:
        write_json(result.summary(), report)
    _print_holes(result, count_judgments(original))


def _write_holes(result: HoleReport, path: Path) -> None:
    import json

    missing = set(result.missing_documents)
    with path.open("w", encoding="utf-8") as handle:
        for hole in result.holes:
            record = {
                "qid": hole.qid,
                "docid": hole.docid,
                "best_rank": hole.best_rank,
                "systems": list(hole.systems),
            }
            if (hole.qid, hole.docid) in missing:
                record["missing_document"] = True
            handle.write(json.dumps(record) + "\n")


def _print_holes(result: HoleReport, judged: int) -> None:
    k = result.depth
    table = Table(title=f"Hole@{k} per system ({result.queries} queries)")
    for column in ("system", f"Hole@{k}", f"Judged@{k}", "queries missing", "duplicates"):
        table.add_column(column, justify="left" if column == "system" else "right")
    for name, rate in sorted(result.hole_at_k.items(), key=lambda item: (-item[1], item[0])):
        table.add_row(
            name,
            fmt(rate),
            fmt(1 - rate),
            str(result.missing_queries[name]),
            str(result.duplicates[name]),
        )
    out.print(table)
    mean = sum(result.hole_at_k.values()) / max(1, len(result.hole_at_k))
    out.print(
        f"pool@{k}: {result.pool_size} pairs, {len(result.holes)} unjudged "
        f"({len(result.holes) / max(1, judged):.0%} of the {judged} original judgments); "
        f"mean Hole@{k} {mean:.3f}"
    )
    if result.queries_without_qrels:
        out.print(f"{len(result.queries_without_qrels)} run queries have no qrels (not pooled)")
    if result.missing_documents:
        out.print(f"{len(result.missing_documents)} holes name documents missing from the corpus")


def _make_judge(
    method: str,
    model: str | None,
    rounds: int,
    adjudicator: str | None,
    concurrency: int | None,
    cache: str | None,
    db: str | None = None,
) -> tuple[Judge, Settings]:
    from docket.relevance import JudgeOptions, build_judge

    settings = load_settings(model=model, concurrency=concurrency, cache=cache)
    options = JudgeOptions.checked(method=method, rounds=rounds, adjudicator=adjudicator)
    get_model = model_factory(settings)
    update = {"db": db or settings.db, "concurrency": pairs_at_once(settings, get_model)}
    return build_judge(options, get_model), settings.model_copy(update=update)


def _judge_in_store(
    pairs: Sequence[Pair], judge: Judge, settings: Settings, job: str, source: str, options: dict
) -> list:
    """Judge through the store: resumable, escalations queued, reviewers' labels applied."""
    from docket.runner import apply_human_decisions, judge_job
    from docket.store import open_store, upsert_job

    store = open_store(settings.db)
    with store.session() as session:
        upsert_job(
            session,
            name=job,
            method=judge.method,
            model=settings.model,
            options=options,
            source=source,
        )
    with resumable(settings.db):
        run = judge_job(store, job, pairs, judge, concurrency=settings.concurrency, console=console)
    results = apply_human_decisions(store, job, run.results)
    if run.queued:
        out.print(f"{run.queued} escalated pairs wait in the review queue (docket review serve)")
    if run.outcome.error is not None:
        console.print(f"[red]stopped early: {run.outcome.error.one_line()}[/red]")
    return [judgment for _, judgment in results]


@app.command("fill")
def fill_command(
    qrels: QrelsOpt,
    corpus: CorpusOpt,
    queries: QueriesOpt,
    out_qrels: Annotated[Path, typer.Option("--out-qrels", help="completed qrels (TREC)")],
    provenance: Annotated[Path, typer.Option("--provenance", help="provenance JSONL")],
    runs: RunsOpt = None,
    more_runs: MoreRuns = None,
    depth: DepthOpt = 10,
    corpus_index: IndexOpt = None,
    method: MethodOpt = "dream",
    model: ModelOpt = None,
    rounds: RoundsOpt = 2,
    adjudicator: AdjudicatorOpt = None,
    concurrency: ConcurrencyOpt = None,
    cache: CacheOpt = None,
    audit: Annotated[bool, typer.Option(help="also re-judge pooled judged pairs")] = False,
    db: Annotated[str | None, typer.Option(help="store path or SQLAlchemy URL")] = None,
    job: Annotated[
        str | None, typer.Option(help="job name (default: holes-<qrels>-<method>)")
    ] = None,
    limit: Annotated[int | None, typer.Option(min=1, help="judge at most this many pairs")] = None,
    level: Annotated[
        str, typer.Option(help="labels in --out-qrels: original|automatic|reviewed")
    ] = "reviewed",
    rel_level: RelLevelOpt = 1,
    grades: GradesOpt = None,
) -> None:
    """Judge the unjudged pooled pairs; write completed qrels and provenance."""
    if level not in LEVELS:
        raise typer.BadParameter(f"use one of {', '.join(LEVELS)}", param_hint="--level")
    original = load_qrels(qrels, grades)
    systems = load_runs(runs, more_runs)
    texts = read_queries(queries)
    lookup = open_corpus(corpus, corpus_index)
    holes = find_holes(original, systems, depth)
    keys = holes.hole_keys + (_pooled_judged(original, systems, depth) if audit else [])
    pairs = build_pairs(keys[:limit] if limit else keys, texts, lookup, original, rel_level)
    judge, settings = _make_judge(method, model, rounds, adjudicator, concurrency, cache, db)
    job_name = job or f"holes-{qrels.stem}-{method}"
    options = {"method": method, "rounds": rounds, "adjudicator": adjudicator, "depth": depth}
    judgments = _judge_in_store(pairs.pairs, judge, settings, job_name, str(qrels), options)
    result = summarize_fill(original, judgments, level=level, rel_level=rel_level)
    write_qrels(result.completed, out_qrels)
    write_provenance(result.records, provenance)
    added = count_judgments(result.completed) - count_judgments(original)
    out.print(
        f"{len(holes.holes)} holes at depth {depth}; judged {len(judgments)} pairs; "
        f"{added} labels added to {out_qrels}"
    )
    out.print("decided: " + ", ".join(f"{n} {k}" for k, n in sorted(result.counts.items())))
    skipped = len(pairs.missing_queries) + len(pairs.missing_documents)
    if skipped:
        out.print(
            f"skipped {len(pairs.missing_documents)} pairs with documents missing from the "
            f"corpus and {len(pairs.missing_queries)} with unknown queries"
        )
    if audit:
        out.print(
            f"audit: {len(result.disagreements)} disagreements with original labels "
            f"(source 'audit' records in {provenance})"
        )


def _pooled_judged(original: dict, systems: Sequence, depth: int) -> list[tuple[str, str]]:
    pooled = pool(systems, depth, sorted(original))
    return [(q, d) for q, docs in pooled.items() for d in docs if d in original[q]]


@app.command("compose")
def compose_command(
    qrels: QrelsOpt,
    provenance: Annotated[
        Path, typer.Option("--provenance", help="provenance JSONL from holes fill")
    ],
    out_qrels: Annotated[Path, typer.Option("--out-qrels", help="qrels to write")],
    level: Annotated[str, typer.Option(help="original | automatic | reviewed")] = "automatic",
    grades: GradesOpt = None,
) -> None:
    """Write qrels for one trust level from the original qrels and a provenance file."""
    if level not in LEVELS:
        raise typer.BadParameter(f"use one of {', '.join(LEVELS)}", param_hint="--level")
    original = load_qrels(qrels, grades)
    composed = compose_qrels(original, read_provenance(provenance), level)  # type: ignore[arg-type]
    write_qrels(composed, out_qrels)
    out.print(f"{count_judgments(composed)} judgments ({level}) written to {out_qrels}")


@app.command("simulate")
def simulate_command(
    qrels: QrelsOpt,
    corpus: CorpusOpt,
    queries: QueriesOpt,
    runs: RunsOpt = None,
    more_runs: MoreRuns = None,
    fraction: Annotated[float, typer.Option(help="share of judged pairs to drop")] = 0.3,
    seed: Annotated[int, typer.Option(help="random seed of the drop")] = 0,
    depth: Annotated[
        int | None, typer.Option(help="drop only judged pairs in the top-k pool")
    ] = None,
    measure: Annotated[str, typer.Option(help="measure that ranks systems")] = "nDCG@10",
    corpus_index: IndexOpt = None,
    method: MethodOpt = "dream",
    model: ModelOpt = None,
    rounds: RoundsOpt = 2,
    adjudicator: AdjudicatorOpt = None,
    concurrency: ConcurrencyOpt = None,
    cache: CacheOpt = None,
    rel_level: RelLevelOpt = 1,
    grades: GradesOpt = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="write the report as JSON")] = None,
) -> None:
    """Drop judged pairs, refill them with a method, report agreement and ranking stability."""
    original = load_qrels(qrels, grades)
    systems = load_runs(runs, more_runs)
    texts = read_queries(queries)
    lookup = open_corpus(corpus, corpus_index)
    judge, settings = _make_judge(method, model, rounds, adjudicator, concurrency, cache)
    report = asyncio.run(
        simulate_holes(
            original,
            systems,
            judge,
            texts,
            lookup,
            fraction=fraction,
            seed=seed,
            depth=depth,
            measure=measure,
            rel_level=rel_level,
            concurrency=settings.concurrency,
        )
    )
    if out_path is not None:
        write_json(report.model_dump(mode="json"), out_path)
    out.print(
        f"dropped {report.dropped} judged pairs (fraction {fraction}, seed {seed}); "
        f"{report.judged} relabelled, {report.escalated} escalated, {report.skipped} skipped"
    )
    out.print(
        f"label agreement: kappa {fmt(report.kappa)}, balanced accuracy "
        f"{fmt(report.balanced_accuracy)}; confusion {report.confusion}"
    )
    for comparison in report.rankings:
        out.print(
            f"{comparison.variant} vs full qrels ({report.measure}): tau {fmt(comparison.tau)}, "
            f"tau_AP {fmt(comparison.tau_ap)}, {comparison.changed} systems changed rank"
        )
