"""``docket holes fill``: judge pooled pairs through the store (``holes simulate`` shares it).

Both commands judge like ``docket judge``: every judgment is stored in a job (resumable,
escalations queued for review, reviewers' decisions applied), with the same judge options
and the same refusal of options the chosen method does not read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from docket.cli.common import (
    console,
    escape,
    model_factory,
    out,
    pairs_at_once,
    print_failed,
    resumable,
)
from docket.cli.executor_flags import ExecutorOpt, RayAddressOpt, RayWorkersOpt, job_executor
from docket.cli.ir_common import (
    GradesOpt,
    MoreRuns,
    QrelsOpt,
    RelLevelOpt,
    RunsOpt,
    load_qrels,
    load_runs,
)
from docket.cli.progress import progress_meter
from docket.config import Settings, load_settings
from docket.ir.corpus import open_corpus
from docket.ir.fill import FillResult, PairSet, build_pairs, summarize_fill
from docket.ir.formats import count_judgments, write_qrels
from docket.ir.holes import find_holes, pool
from docket.ir.provenance import LEVELS, write_provenance
from docket.ir.queries import read_queries
from docket.relevance import JudgeOptions
from docket.relevance.types import Judge, Judgment, Pair

DepthOpt = Annotated[int, typer.Option(min=1, help="pooling depth k (Hole@k)")]
CorpusOpt = Annotated[str, typer.Option("--corpus", help="corpus .jsonl/.tsv or irds:<id>")]
IndexOpt = Annotated[
    Path | None, typer.Option(help="SQLite index of the corpus (default: user cache)")
]
QueriesOpt = Annotated[
    str, typer.Option("--queries", help="queries .tsv/.jsonl, TREC topics, or irds:<id>")
]
TopicFieldOpt = Annotated[
    str, typer.Option(help="TREC topics: title | desc | narr (or several: title,desc)")
]
MethodOpt = Annotated[str, typer.Option(help="dream | single | lara | majority")]
ModelOpt = Annotated[str | None, typer.Option(help="model name (default: local)")]
RoundsOpt = Annotated[int, typer.Option(help="dream: debate rounds R")]
StancesOpt = Annotated[str, typer.Option(help="dream: opposing | swapped | neutral")]
AgentsOpt = Annotated[int, typer.Option(help="dream: debating agents (consensus = unanimous)")]
AgentModelOpt = Annotated[list[str] | None, typer.Option(help="dream: model per agent (repeat)")]
AdjudicatorOpt = Annotated[
    str | None, typer.Option(help="dream: LLM adjudicator model instead of a human")
]
ReviewsOpt = Annotated[int, typer.Option(min=1, help="independent reviewers per escalated pair")]
ConcurrencyOpt = Annotated[int | None, typer.Option(help="pairs judged at once")]
CacheOpt = Annotated[str | None, typer.Option(help="response cache file, or 'off'")]
DbOpt = Annotated[str | None, typer.Option(help="store path or SQLAlchemy URL")]
RetryFailedOpt = Annotated[
    bool, typer.Option(help="judge again the pairs a server refused in earlier runs")
]


SETTING_FLAGS = ("model", "concurrency", "cache", "executor", "ray_address", "ray_workers")
"""The CLI values of a fill or simulate run that are settings, not judge options."""


@dataclass(frozen=True)
class JudgeSetup:
    """The judge of a fill or simulate run, its settings and how it stores its work."""

    judge: Judge
    settings: Settings
    options: JudgeOptions
    reviews: int
    retry_failed: bool = False


def make_judge(method: str, db: str | None, reviews: int = 1, **values: Any) -> JudgeSetup:
    """Build the judge from CLI values; refuse options that ``method`` does not read."""
    from docket.relevance import build_judge
    from docket.relevance.options import check_applicable

    retry_failed = values.pop("retry_failed", False)
    settings = load_settings(
        db=db,
        **{key: values.pop(key, None) for key in SETTING_FLAGS},
    )
    values["agent_models"] = values.pop("agent_model") or []
    options = JudgeOptions.checked(method=method, **values)
    check_applicable(method, options)
    get_model = model_factory(settings)
    judge = build_judge(options, get_model)
    settings = settings.model_copy(update={"concurrency": pairs_at_once(settings, get_model)})
    return JudgeSetup(judge, settings, options, reviews, retry_failed)


@dataclass(frozen=True)
class StoredRun:
    """Judgments of a run through the store, and what the run itself did."""

    judgments: list[Judgment]
    judged_now: int
    from_store: int
    failed: list[tuple[str, str, str]]
    busy: int

    def print_failed(self) -> None:
        """Name the pairs a server refused (as ``docket judge`` does)."""
        print_failed(self.failed, self.busy)


def judge_in_store(pairs: Sequence[Pair], setup: JudgeSetup, job: str, source: str) -> StoredRun:
    """Judge through the store: resumable, escalations queued, reviewers' labels applied."""
    from docket.runner import apply_human_decisions, judge_job
    from docket.store import open_store, upsert_job

    store = open_store(setup.settings.db)
    with store.session() as session:
        upsert_job(
            session,
            name=job,
            method=setup.judge.method,
            model=setup.settings.model,
            options=setup.options.record(),
            source=source,
        )
    with (
        resumable(setup.settings.db),
        job_executor(setup.options, setup.settings) as executor,
        progress_meter("judging", len(pairs)) as on_progress,
    ):
        run = judge_job(
            store, job, pairs, setup.judge,
            concurrency=setup.settings.concurrency, on_progress=on_progress,
            required_reviews=setup.reviews, retry_failed=setup.retry_failed, executor=executor,
        )  # fmt: skip
    results = apply_human_decisions(store, job, run.results)
    if run.outcome.error is not None:
        console.print(f"[red]stopped early:[/red] {escape(run.outcome.error.one_line())}")
    judgments = [j for _, j in results]
    outcome = run.outcome
    return StoredRun(judgments, outcome.judged, outcome.skipped, run.failed, outcome.busy)


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
    topic_field: TopicFieldOpt = "title",
    method: MethodOpt = "dream",
    model: ModelOpt = None,
    rounds: RoundsOpt = 2,
    stances: StancesOpt = "opposing",
    agents: AgentsOpt = 2,
    agent_model: AgentModelOpt = None,
    adjudicator: AdjudicatorOpt = None,
    reviews: ReviewsOpt = 1,
    concurrency: ConcurrencyOpt = None,
    cache: CacheOpt = None,
    executor: ExecutorOpt = None,
    ray_address: RayAddressOpt = None,
    ray_workers: RayWorkersOpt = None,
    retry_failed: RetryFailedOpt = False,
    audit: Annotated[bool, typer.Option(help="also re-judge pooled judged pairs")] = False,
    db: DbOpt = None,
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
    setup = make_judge(
        method, db, reviews, model=model, concurrency=concurrency, cache=cache, rounds=rounds,
        stances=stances, agents=agents, agent_model=agent_model, adjudicator=adjudicator,
        executor=executor, ray_address=ray_address, ray_workers=ray_workers,
        retry_failed=retry_failed,
    )  # fmt: skip
    original = load_qrels(qrels, grades)
    systems = load_runs(runs, more_runs)
    texts = read_queries(queries, topic_field)
    holes = find_holes(original, systems, depth)
    keys = holes.hole_keys + (_pooled_judged(original, systems, depth) if audit else [])
    pairs = build_pairs(
        keys[:limit] if limit else keys,
        texts,
        open_corpus(corpus, corpus_index),
        original,
        rel_level,
    )
    stored = judge_in_store(pairs.pairs, setup, job or f"holes-{qrels.stem}-{method}", str(qrels))
    result = summarize_fill(original, stored.judgments, level=level, rel_level=rel_level)
    write_qrels(result.completed, out_qrels)
    write_provenance(result.records, provenance)
    _print_fill(len(holes.holes), depth, stored, result, original, out_qrels)
    _print_skipped(pairs)
    stored.print_failed()
    if audit:
        out.print(
            f"audit: {len(result.disagreements)} disagreements with original labels "
            f"(source 'audit' records in {escape(provenance)})"
        )


def _print_fill(
    holes: int, depth: int, stored: StoredRun, result: FillResult, original: dict, path: Path
) -> None:
    """One consistent summary: every count comes from the judgments after review."""
    added = count_judgments(result.completed) - count_judgments(original)
    reused = f", {stored.from_store} already in the store" if stored.from_store else ""
    out.print(
        f"{holes} holes at depth {depth}; judged {stored.judged_now} pairs now{reused}; "
        f"{added} labels added to {escape(path)}"
    )
    out.print("decided: " + ", ".join(f"{n} {k}" for k, n in sorted(result.counts.items())))
    waiting = sum(j.label is None for j in stored.judgments)
    if waiting:
        out.print(f"{waiting} escalated pairs wait in the review queue (docket review serve)")


def _print_skipped(pairs: PairSet) -> None:
    skipped = len(pairs.missing_queries) + len(pairs.missing_documents)
    if skipped:
        out.print(
            f"skipped {len(pairs.missing_documents)} pairs with documents missing from the "
            f"corpus and {len(pairs.missing_queries)} with unknown queries"
        )


def _pooled_judged(original: dict, systems: Sequence, depth: int) -> list[tuple[str, str]]:
    pooled = pool(systems, depth, sorted(original))
    return [(q, d) for q, docs in pooled.items() for d in docs if d in original[q]]
