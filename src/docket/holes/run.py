"""Fill and simulate holes through the job API: every pair judged in a resumable job.

:func:`fill_holes` judges the unjudged pooled pairs of a benchmark and returns completed
qrels with provenance; :func:`simulate_holes` drops judged pairs, judges them again and
scores the refilled qrels against the full ones. Both judge with :func:`run_job`, so they
resume, queue escalations and apply reviewers' decisions exactly as ``docket judge`` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docket.errors import ConfigError
from docket.frames import frame
from docket.holes.fill import FillResult, PairSet, build_pairs, summarize_fill
from docket.holes.order import HoleOrder, parse_hole_count
from docket.holes.ordered import BATCH, judge_in_order
from docket.holes.simulate import SimulationReport, plan_simulation, score_simulation
from docket.ir.corpus import Corpus, open_corpus
from docket.ir.formats import Qrels, Run, read_qrels, read_runs
from docket.ir.holes import HoleReport, find_holes, pool
from docket.ir.provenance import ProvenanceRecord
from docket.ir.queries import read_guidance, read_queries
from docket.jobs.result import JobRun
from docket.jobs.run import Progress, run_job
from docket.jobs.spec import JobSpec
from docket.relevance.types import Judge
from docket.runner import StoredResults, apply_human_decisions
from docket.store import Store

QrelsIn = Qrels | str | Path
RunsIn = Sequence[Run | str | Path]
GuidanceIn = Mapping[str, str] | str | Path | None
"""Per-query guidance: ``{qid: text}``, or a topics/JSONL file or ``irds:`` id to read."""


@dataclass(frozen=True)
class HoleFill:
    """A hole-filling run: the job, the completed qrels and provenance, what was left out.

    Attributes:
        run: the judging job (judgments, usage, failed pairs, escalations).
        result: completed qrels, provenance records, audit disagreements, label counts.
        holes: unjudged pooled pairs at ``depth``.
        depth: the pooling depth.
        pairs: the pairs judged, and the keys without query or document text.
        original: the qrels before filling.
        budget: holes to judge under a budget (None: all of them).
        order: the order they were drawn in (``depth``, ``mtf`` or ``bandit``).
    """

    run: JobRun
    result: FillResult
    holes: int
    depth: int
    pairs: PairSet
    original: Qrels
    budget: int | None = None
    order: str = "depth"

    @property
    def complete(self) -> bool:
        """Every pair asked for has a stored judgment (none failed, none stopped early)."""
        return self.run.complete and self.run.error is None

    def to_pandas(self) -> Any:
        """The provenance of the completed qrels, one row per (qid, docid): every original
        judgment, then each new label (columns of
        :class:`~docket.ir.provenance.ProvenanceRecord`: ``relevance`` as written to the
        qrels, ``label``, ``source``, ``rounds``, ``method``, ``model``, ``audit``,
        ``original``).

        Raises:
            MissingDependencyError: pandas is not installed.
        """
        rows = [record.model_dump() for record in self.result.records]
        return frame(rows, list(ProvenanceRecord.model_fields))


@dataclass(frozen=True)
class HoleSimulation:
    """A hole simulation: the refilling job and its report."""

    run: JobRun
    report: SimulationReport


def load_ir_inputs(
    qrels: QrelsIn, runs: RunsIn, queries: Mapping[str, str] | str | Path,
    corpus: Corpus | str | Path, *, grades: Iterable[int] | None = None,
    topic_field: str = "title", corpus_index: str | Path | None = None,
) -> tuple[Qrels, list[Run], Mapping[str, str], Corpus]:  # fmt: skip
    """Read whatever of qrels, runs, queries and corpus is given as a path or ``irds:`` id."""
    loaded_qrels = qrels if isinstance(qrels, Mapping) else read_qrels(qrels, grades)
    paths = [r for r in runs if not isinstance(r, Run)]
    systems = [r for r in runs if isinstance(r, Run)] + (read_runs(paths) if paths else [])
    texts = queries if isinstance(queries, Mapping) else read_queries(queries, topic_field)
    documents = corpus if hasattr(corpus, "get_many") else open_corpus(corpus, corpus_index)
    return loaded_qrels, systems, texts, documents  # type: ignore[return-value]


def load_guidance(
    queries: Mapping[str, str] | str | Path | None, guidance: GuidanceIn = None,
    guidance_field: str | None = None,
) -> dict[str, str]:  # fmt: skip
    """Each query's guidance: ``guidance`` as given (a mapping or a file), or the
    ``guidance_field`` (``desc,narr``) of the queries file or ``irds:`` dataset; {} for none.
    """
    if isinstance(guidance, Mapping):
        return {str(q): str(t).strip() for q, t in guidance.items()}
    source = guidance if guidance is not None else queries
    if guidance_field is None and guidance is None:
        return {}
    if source is None or isinstance(source, Mapping):
        raise ConfigError(
            "guidance fields are read from a queries file or irds: id",
            hint="pass guidance={qid: text}, or queries as a path",
        )
    return read_guidance(source, guidance_field or "desc,narr")


def fill_holes(
    qrels: QrelsIn, runs: RunsIn, queries: Mapping[str, str] | str | Path,
    corpus: Corpus | str | Path, spec: JobSpec | None = None, *,
    depth: int = 10, audit: bool = False, limit: int | None = None, level: str = "reviewed",
    rel_level: int = 1, job: str | None = None, on_progress: Progress | None = None,
    judge: Judge | None = None, budget: int | str | None = None, order: str = "depth",
    seed: int = 0, batch: int = BATCH, guidance: GuidanceIn = None,
    guidance_field: str | None = None, whole_pool: bool = False, **inputs: Any,
) -> HoleFill:  # fmt: skip
    """Judge the unjudged pooled pairs and compose completed qrels with provenance.

    Args:
        qrels: loaded qrels, or a path / ``irds:`` id to read (``grades`` in ``inputs``
            says how).
        runs: loaded runs, or paths to read.
        queries: loaded queries, or a path / ``irds:`` id (``topic_field`` in ``inputs``).
        corpus: a loaded corpus, or a path (``corpus_index`` in ``inputs``).
        spec: how to judge (default: DREAM on the default model, see :meth:`JobSpec.of`).
        depth: pooling depth k.
        audit: also judge the pooled pairs that are already judged.
        limit: judge at most this many pairs: the best-ranked holes first, interleaved
            across queries (:meth:`~docket.ir.holes.HoleReport.by_pool_rank`), then the
            audited pairs.
        level: labels in the completed qrels: ``original``, ``automatic`` or ``reviewed``.
        rel_level: grade from which a document counts as relevant.
        job: job name (default ``holes-<qrels stem>-<method>``).
        judge: a judge object of your own instead of the spec's method (see :func:`run_job`).
        budget: judge only this many holes (``N`` or ``"P%"`` of the holes), in ``order``.
        order: ``depth``, ``mtf`` or ``bandit`` (:mod:`docket.holes.order`); a rerun with the
            same seed and batch and a larger budget continues the same order.
        seed: breaks ties between runs in ``mtf`` and ``bandit``.
        batch: holes judged between two updates of the order.
        whole_pool: judge the judged pooled pairs too (as ``audit``) and also return the
            qrels of the new labels alone (``result.whole_pool``), to compare the two
            completions (``docket eval systems --whole-pool-qrels``).
        guidance: each query's guidance for the prompt (the collection's description of
            what counts as relevant): ``{qid: text}`` or a file (:func:`load_guidance`).
        guidance_field: or the fields (``desc,narr``) of ``queries`` to read it from.
    """
    spec = spec or JobSpec.of()
    original, systems, texts, documents = load_ir_inputs(qrels, runs, queries, corpus, **inputs)
    described = load_guidance(queries, guidance, guidance_field)
    holes = find_holes(original, systems, depth)
    name = job or f"holes-{job_stem(qrels)}-{judge.method if judge else spec.method}"
    audit = audit or whole_pool
    if budget is not None or order != "depth":
        _refuse_limit_with_budget(audit, limit)
        pairs = build_pairs(holes.hole_keys, texts, documents, original, rel_level, described)
        count, run = _judge_budgeted(pairs, original, systems, spec, name, qrels, depth, rel_level,
                                     budget, order, seed, batch, on_progress, judge)  # fmt: skip
    else:
        keys = _ranked_keys(holes, original, systems, depth, audit)
        pairs = build_pairs(keys[:limit] if limit else keys, texts, documents, original,
                            rel_level, described)  # fmt: skip
        count, run = None, run_job(pairs.pairs, spec, job=name, source=source_name(qrels),
                                   on_progress=on_progress, judge=judge)  # fmt: skip
    result = summarize_fill(original, [j for _, j in run.judgments()], level=level,
                            rel_level=rel_level, whole_pool=whole_pool)  # fmt: skip
    return HoleFill(run, result, len(holes.holes), depth, pairs, original, count, order)


def _refuse_limit_with_budget(audit: bool, limit: int | None) -> None:
    """A budgeted order chooses the pairs itself: --limit, --audit and --whole-pool conflict."""
    if audit or limit:
        raise ConfigError(
            "--budget/--order replace --limit, --audit and --whole-pool; give one of them"
        )


def _ranked_keys(
    holes: HoleReport, original: Qrels, systems: list[Run], depth: int, audit: bool
) -> list[tuple[str, str]]:
    """The holes best-ranked first (what --limit keeps), then with ``audit`` the judged
    pooled pairs."""
    ranked = [(hole.qid, hole.docid) for hole in holes.by_pool_rank()]  # what --limit keeps
    return ranked + (_pooled_judged(original, systems, depth) if audit else [])


def _judge_budgeted(
    pairs: PairSet, original: Qrels, systems: list[Run], spec: JobSpec, name: str, qrels: QrelsIn,
    depth: int, rel_level: int, budget: int | str | None, order: str, seed: int, batch: int,
    on_progress: Progress | None, judge: Judge | None,
) -> tuple[int, JobRun]:  # fmt: skip
    """Judge ``budget`` of the holes' ``pairs`` (all when None) in ``order``: (count, run)."""
    by_key = {pair.key: pair for pair in pairs.pairs}
    count = len(by_key) if budget is None else parse_hole_count(budget, len(by_key))
    planner = HoleOrder(by_key, systems, original, order=order, seed=seed,
                        rel_level=rel_level)  # fmt: skip
    kept = {"order": order, "seed": seed, "depth": depth, "rel_level": rel_level}
    run = judge_in_order(by_key, planner, count, spec, job=name, source=source_name(qrels),
                         settings=kept,
                         batch=batch, on_progress=on_progress, judge=judge).run  # fmt: skip
    return count, run


def simulate_holes(
    qrels: QrelsIn,
    runs: RunsIn,
    queries: Mapping[str, str] | str | Path,
    corpus: Corpus | str | Path,
    spec: JobSpec | None = None,
    *,
    fraction: float = 0.3,
    seed: int = 0,
    depth: int | None = None,
    measure: str = "nDCG@10",
    rel_level: int = 1,
    job: str | None = None,
    on_progress: Progress | None = None,
    judge: Judge | None = None,
    guidance: GuidanceIn = None,
    guidance_field: str | None = None,
    **inputs: Any,
) -> HoleSimulation:
    """Drop a seeded ``fraction`` of judged pairs, judge them again, compare with the full qrels.

    Reports label agreement (Cohen's kappa, balanced accuracy) and how close the system
    ranking under the refilled qrels is to the one under the full qrels. ``guidance`` and
    ``guidance_field`` as in :func:`fill_holes`.
    """
    spec = spec or JobSpec.of()
    original, systems, texts, documents = load_ir_inputs(qrels, runs, queries, corpus, **inputs)
    kept, dropped = plan_simulation(original, systems, fraction, seed, depth)
    described = load_guidance(queries, guidance, guidance_field)
    pairs = build_pairs(dropped, texts, documents, original, rel_level, described)
    name = job or f"simulate-{job_stem(qrels)}-{judge.method if judge else spec.method}-{seed}"
    run = run_job(pairs.pairs, spec, job=name, source=source_name(qrels), on_progress=on_progress,
                  judge=judge)  # fmt: skip
    judgments = [j for _, j in run.judgments()]
    skipped = len(pairs.missing_queries) + len(pairs.missing_documents)
    report = score_simulation(
        original, kept, dropped, judgments, systems, fraction=fraction, seed=seed,
        measure=measure, rel_level=rel_level, skipped=skipped,
    )  # fmt: skip
    return HoleSimulation(run, report)


def complete_qrels(
    store: Store, job: str, original: Qrels, *, level: str = "reviewed", rel_level: int = 1
) -> FillResult:
    """The original qrels completed with a stored job's labels, with provenance records.

    What ``docket export --completed`` writes: every original judgment (original labels
    always win) plus the job's labels at ``level``, reviewers' decisions applied.
    """
    results = apply_human_decisions(store, job, list(StoredResults(store, job)))
    return summarize_fill(original, [j for _, j in results], level=level, rel_level=rel_level)


def source_name(qrels: QrelsIn) -> str:
    """The job's recorded source: the qrels path, or ``qrels`` for loaded qrels."""
    return "qrels" if isinstance(qrels, Mapping) else str(qrels)


def job_stem(qrels: QrelsIn) -> str:
    """The qrels file's stem for default job names (``qrels`` for loaded qrels)."""
    return "qrels" if isinstance(qrels, Mapping) else Path(str(qrels)).stem


def _pooled_judged(original: Qrels, systems: Sequence[Run], depth: int) -> list[tuple[str, str]]:
    pooled = pool(systems, depth, sorted(original))
    return [(q, d) for q, docs in pooled.items() for d in docs if d in original[q]]
