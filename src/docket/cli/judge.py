"""``docket judge`` and ``docket export``: judge pairs into the store, export the labels."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from docket.cli.common import (
    canonical_model,
    model_factory,
    out,
    pairs_at_once,
    print_failed,
    resumable,
)
from docket.cli.executor_flags import (
    ExecutorOpt,
    RayAddressOpt,
    RayWorkersOpt,
    job_executor,
    run_usage,
)
from docket.cli.progress import progress_meter
from docket.cli.summary import RunReport, print_summary
from docket.config import load_settings
from docket.relevance import JudgeOptions, build_judge
from docket.relevance.options import check_applicable
from docket.relevance.pairs_io import scan_pairs
from docket.runner import judge_job
from docket.store import Store, open_store, upsert_job
from docket.store.base import display_url

log = logging.getLogger(__name__)
app = typer.Typer()

Method = Annotated[str, typer.Option(help="dream | single | lara | majority")]


@app.command()
def judge(
    pairs_path: Annotated[
        Path, typer.Argument(metavar="PAIRS", help="JSONL or TSV: qid, query, docid, text[, label]")
    ],
    method: Method = "dream",
    model: Annotated[str | None, typer.Option(help="model name (default: local)")] = None,
    job: Annotated[str | None, typer.Option(help="job name (default: file stem + method)")] = None,
    db: Annotated[str | None, typer.Option(help="store path or SQLAlchemy URL")] = None,
    concurrency: Annotated[
        int | None, typer.Option(help="pairs judged at once (default: --max-in-flight)")
    ] = None,
    max_in_flight: Annotated[
        int | None,
        typer.Option(help="LLM calls in flight per model (default 64 served, 1 local)"),
    ] = None,
    timeout: Annotated[
        float | None, typer.Option(help="seconds per LLM request before a retry (120)")
    ] = None,
    retry_failed: Annotated[
        bool, typer.Option(help="judge again the pairs a server refused in earlier runs")
    ] = False,
    executor: ExecutorOpt = None,
    ray_address: RayAddressOpt = None,
    ray_workers: RayWorkersOpt = None,
    cache: Annotated[str | None, typer.Option(help="response cache file, or 'off'")] = None,
    max_retries: Annotated[int | None, typer.Option(help="retries per LLM call")] = None,
    rounds: Annotated[int, typer.Option(help="debate rounds R")] = 2,
    stances: Annotated[str, typer.Option(help="opposing | swapped | neutral")] = "opposing",
    agents: Annotated[int, typer.Option(help="debating agents (consensus = unanimous)")] = 2,
    agent_model: Annotated[list[str] | None, typer.Option(help="model per agent (repeat)")] = None,
    adjudicator: Annotated[
        str | None, typer.Option(help="LLM adjudicator model instead of a human")
    ] = None,
    scale: Annotated[str, typer.Option(help="single judge: binary | graded")] = "binary",
    samples: Annotated[int, typer.Option(help="majority: samples per pair")] = 5,
    budget: Annotated[float, typer.Option(help="lara: share of pairs sent to humans")] = 0.035,
    reviews: Annotated[int, typer.Option(help="independent reviewers per escalated pair")] = 1,
) -> None:
    """Judge query-chunk pairs (DREAM debate by default); resumable, results in the store."""
    settings = load_settings(
        model=model, db=db, concurrency=concurrency, cache=cache, max_retries=max_retries,
        max_in_flight=max_in_flight, timeout=timeout, executor=executor,
        ray_address=ray_address, ray_workers=ray_workers,
    )  # fmt: skip
    options = JudgeOptions.checked(
        method=method,
        rounds=rounds,
        stances=stances,
        agents=agents,
        agent_models=agent_model or [],
        adjudicator=adjudicator,
        scale=scale,
        samples=samples,
        budget=budget,
    )
    check_applicable(method, options)
    loaded = scan_pairs(pairs_path)  # checked whole, then streamed
    if loaded.duplicates:
        log.warning("%s: %d duplicate pairs judged once", pairs_path, loaded.duplicates)
    job_name = job or f"{pairs_path.stem}-{method}"
    store = _open_job(settings.db, job_name, canonical_model(settings.model), options, pairs_path)
    get_model = model_factory(settings)
    judge_ = build_judge(options, get_model)
    with (
        resumable(settings.db),
        job_executor(options, settings) as runner,
        progress_meter("judging", len(loaded)) as on_progress,
    ):
        run = judge_job(
            store, job_name, loaded, judge_,
            concurrency=pairs_at_once(settings, get_model), on_progress=on_progress,
            required_reviews=reviews, retry_failed=retry_failed, executor=runner,
        )  # fmt: skip
        usage = run_usage(get_model, runner)
    report = RunReport(
        judged=run.outcome.judged, skipped=run.outcome.skipped, usage=usage, queued=run.queued
    )
    print_summary(run.results, job_name, display_url(settings.db), report)
    if report.usage.retries:
        out.print(f"{report.usage.retries} LLM calls were retried after transient failures")
    print_failed(run.failed, run.outcome.busy)
    if run.outcome.error is not None:
        raise run.outcome.error


def _open_job(db: str, name: str, model: str, options: JudgeOptions, source: Path) -> Store:
    """Open the store and create the job, or check that a rerun resumes it unchanged."""
    store = open_store(db)
    with store.session() as session:
        upsert_job(
            session, name=name, method=options.method, model=model,
            options=options.model_dump(), source=str(source),
        )  # fmt: skip
    return store
