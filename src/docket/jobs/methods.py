"""Compare relevance methods on gold-labelled pairs, each method judged in a job of its own.

DREAM and the baselines run through :func:`docket.jobs.run_job`: every method's judgments
are stored (``<prefix>-<method>``, and ``<prefix>-dream-R<r>`` for the points of DREAM's
curve), so an interrupted comparison resumes, and a rerun scores again with no LLM call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from docket.frames import frame, import_pandas
from docket.jobs.inputs import JobInput, job_input
from docket.jobs.result import FRAME_COLUMNS, JobRun
from docket.jobs.run import run_job
from docket.jobs.spec import JobSpec
from docket.relevance.evaluate import DREAM_ROUNDS, LARA_BUDGETS, EvalReport, evaluate_methods
from docket.relevance.metrics import Key
from docket.relevance.options import JudgeOptions
from docket.relevance.types import Judgment

MethodProgress = Callable[[str, int, int], None]
"""Called with ``(run tag, settled pairs, total pairs)`` while a method is judged."""


@dataclass(frozen=True)
class MethodComparison:
    """The report of a comparison and the job behind each of its runs (by tag)."""

    report: EvalReport
    runs: dict[str, JobRun] = field(default_factory=dict)

    def to_pandas(self, pairs: bool = False) -> Any:
        """One row per method with its metrics (:meth:`EvalReport.to_pandas`), or with
        ``pairs`` every run's judgments (:meth:`JobRun.to_pandas`) under a ``run`` column
        naming the run's tag (``dream``, ``dream R=3``, ``lara b=0.125`` ...).

        Raises:
            MissingDependencyError: pandas is not installed.
        """
        if not pairs:
            return self.report.to_pandas()
        pandas = import_pandas()
        parts = [run.to_pandas().assign(run=tag) for tag, run in self.runs.items()]
        if not parts:
            return frame([], ["run", *FRAME_COLUMNS])
        joined = pandas.concat(parts, ignore_index=True)
        return joined[["run", *FRAME_COLUMNS]]


def compare_methods(
    pairs: Any,
    methods: Sequence[str],
    spec: JobSpec | None = None,
    *,
    humans: Mapping[Key, int] | None = None,
    job_prefix: str | None = None,
    dream_rounds: Sequence[int] = DREAM_ROUNDS,
    lara_budgets: Sequence[float] = LARA_BUDGETS,
    on_progress: MethodProgress | None = None,
    **values: Any,
) -> MethodComparison:
    """Judge gold-labelled ``pairs`` with each of ``methods`` and score them against gold.

    Args:
        pairs: a pairs file, a DataFrame or Pairs, with gold labels.
        methods: e.g. ``["dream", "single", "lara", "majority"]``.
        spec: shared judge options and settings (default: ``values``, see :meth:`JobSpec.of`);
            options of any of ``methods`` are accepted.
        humans: decisions that answer escalations; None lets gold stand in for humans.
        job_prefix: jobs are named ``<prefix>-<tag>`` (default ``eval-<input stem>``).
        dream_rounds: values of R for DREAM's curve; lara_budgets: budgets for LARA's.
        on_progress: see :data:`MethodProgress`.
    """
    spec = spec or JobSpec.of(methods=tuple(methods), **values)
    loaded = spec.select(job_input(pairs))
    prefix = job_prefix or f"eval-{loaded.stem}"
    runs: dict[str, JobRun] = {}

    def judge_all(options: JudgeOptions, tag: str) -> list[Judgment]:
        run = _run_one(loaded, spec, options, f"{prefix}-{tag.replace(' R=', '-R')}", tag,
                       on_progress)  # fmt: skip
        runs[tag] = run
        return _in_input_order(run, loaded)

    report = evaluate_methods(
        list(loaded), methods, spec.options, judge_all, humans=humans,
        duplicates=loaded.duplicates, dream_rounds=dream_rounds, lara_budgets=lara_budgets,
    )  # fmt: skip
    return MethodComparison(report, runs)


def _run_one(
    loaded: JobInput, spec: JobSpec, options: JudgeOptions, job: str, tag: str,
    on_progress: MethodProgress | None,
) -> JobRun:  # fmt: skip
    method_spec = replace(spec, options=options)
    report = None if on_progress is None else (lambda done, total: on_progress(tag, done, total))
    run = run_job(loaded, method_spec, job=job, on_progress=report)
    run.raise_for_error()  # scoring a method on part of the pairs would mislead
    return run


def _in_input_order(run: JobRun, loaded: JobInput) -> list[Judgment]:
    by_key = {pair.key: judgment for pair, judgment in run.results}
    return [by_key[pair.key] for pair in loaded if pair.key in by_key]
