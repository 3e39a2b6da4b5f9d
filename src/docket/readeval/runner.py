"""``run``: verify every sample of a RE-AD-Eval dataset with docket's verifier and score it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from docket.adherence.rules import RuleSet
from docket.adherence.verify.submission import Submission
from docket.adherence.verify.verdict import Mode, Verdict
from docket.adherence.verify.verifier import Verifier, VerifierConfig
from docket.errors import ConfigError, InputError
from docket.fanout import bounded_map
from docket.llm import Model
from docket.readeval.dataset import PAPER_F1, REFERENCE, Dataset, DatasetHeader, Sample
from docket.readeval.scoring import (
    Breakdown,
    ReviewCounts,
    SampleScore,
    breakdown,
    percentile,
    review_counts,
    rule_outcomes,
    sample_score,
)
from docket.readeval.setup import model_family

Progress = Callable[[int, int], None]


class ModeReport(BaseModel):
    """Scores, latency and LLM use of one verifier mode over the dataset."""

    mode: str
    models: dict[str, str | None]
    samples: int
    needs_review_as_flag: Breakdown
    needs_review_as_pass: Breakdown
    needs_review: ReviewCounts
    latency_ms: dict[str, float | None]
    llm_calls: int
    llm_calls_per_sample: float | None
    prompt_tokens: int
    response_cache_hits: int
    per_sample: list[SampleScore] = Field(default_factory=list)


class RunReport(BaseModel):
    """The result of ``docket bench readeval run``: one :class:`ModeReport` per mode."""

    dataset: str
    ruleset: str
    ruleset_version: str
    tiers: list[str]
    scored: int
    not_scored: int
    modes: dict[str, ModeReport]
    warnings: list[str]
    reference: dict[str, Any] = Field(
        default_factory=lambda: {"paper_f1": PAPER_F1, "note": REFERENCE}
    )


def select_samples(
    dataset: Dataset, ruleset: RuleSet, limit: int | None = None
) -> tuple[list[Sample], int]:
    """The samples whose injected rule is in ``ruleset`` (first ``limit``), and how many not."""
    ids = {rule.id for rule in ruleset.rules}
    chosen = [sample for sample in dataset.samples if sample.rule_id in ids]
    not_scored = len(dataset.samples) - len(chosen)
    if limit is not None:
        not_scored += max(0, len(chosen) - limit)
        chosen = chosen[:limit]
    return chosen, not_scored


def require_samples(
    dataset: Dataset, chosen: Sequence[Sample], ruleset_name: str, dataset_name: str = ""
) -> None:
    """Refuse a run with nothing to score: an empty dataset, or no sample for these rules.

    Raises:
        InputError: the dataset holds no samples.
        ConfigError: none of its samples is about a rule of the rule set.
    """
    if not dataset.samples:
        raise InputError(
            "the dataset holds no samples",
            path=dataset_name or None,
            hint="build one with `docket bench readeval build`",
        )
    if not chosen:
        raise ConfigError(
            f"none of the {len(dataset.samples)} samples is about a rule of '{ruleset_name}'",
            hint="use the rules file the dataset was built from, or other --tiers",
        )


def run_warnings(header: DatasetHeader, ruleset: RuleSet, model_names: Sequence[str]) -> list[str]:
    """Warnings: changed rules, self-preference, sim/sub truth that no judge checked."""
    notes = []
    changed = [
        rule.id
        for rule in ruleset.rules
        if header.ruleset.versions.get(rule.id, rule.version) != rule.version
    ]
    if changed:
        notes.append(
            f"rules changed since the dataset was built: {', '.join(changed)}; "
            "their ground truth may no longer hold"
        )
    generator = header.models.get("generator")
    for name in sorted(set(model_names)):
        if generator and model_family(generator) == model_family(name):
            notes.append(
                f"the verifier model {name} looks like the family of the dataset's generator "
                f"({generator}): self-preference may inflate the scores"
            )
    if not header.judge_checked and any(rule.tier != "fmt" for rule in ruleset.rules):
        notes.append(
            "the dataset was built without a judge: sim/sub flags count as false positives, "
            "but no judge confirmed the samples are free of sim/sub violations"
        )
    return notes


def _usage(models: Sequence[Model]) -> dict[str, int]:
    return {
        "prompt_tokens": sum(m.usage.prompt_tokens for m in models),
        "cache_hits": sum(m.usage.cache_hits for m in models),
    }


async def _verify_all(
    verifier: Verifier, samples: Sequence[Sample], concurrency: int, progress: Progress | None
) -> list[Verdict]:
    done = 0

    def report(_index: int, _verdict: Verdict) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, len(samples))

    return await bounded_map(
        samples,
        lambda sample: verifier.verify(Submission(sample.record)),
        limit=concurrency,
        on_done=report,
    )


def mode_report(
    mode: str, samples: Sequence[Sample], verdicts: Sequence[Verdict], ruleset: RuleSet
) -> ModeReport:
    """Score the verdicts of one mode (usage fields are filled in by the caller)."""
    outcomes = [
        o
        for s, v in zip(samples, verdicts, strict=True)
        for o in rule_outcomes(s, v, ruleset.rules)
    ]
    scores = [sample_score(s, v) for s, v in zip(samples, verdicts, strict=True)]
    times = [score.ms for score in scores]
    calls = sum(score.calls for score in scores)
    return ModeReport(
        mode=mode,
        models={},
        samples=len(samples),
        needs_review_as_flag=breakdown(outcomes, "flag"),
        needs_review_as_pass=breakdown(outcomes, "pass"),
        needs_review=review_counts(outcomes),
        latency_ms={
            "p50": percentile(times, 50),
            "p95": percentile(times, 95),
            "mean": sum(times) / len(times) if times else None,
        },
        llm_calls=calls,
        llm_calls_per_sample=calls / len(samples) if samples else None,
        prompt_tokens=0,
        response_cache_hits=0,
        per_sample=scores,
    )


async def run_readeval(
    dataset: Dataset,
    ruleset: RuleSet,
    *,
    sim_model: Model | None = None,
    sub_model: Model | None = None,
    modes: Sequence[Mode] = ("atomic",),
    timeout_s: float = 60.0,
    concurrency: int = 4,
    limit: int | None = None,
    dataset_name: str = "",
    progress: Callable[[str], Progress | None] | None = None,
) -> RunReport:
    """Verify and score the samples whose injected rule is in ``ruleset``, once per mode.

    The verifier's incremental cache is off, so every sample is verified on its own.

    Raises:
        InputError: the dataset holds no samples.
        ConfigError: no sample is about a rule of ``ruleset``, or the rule set has LLM
            rules for a tier without a model.
    """
    samples, not_scored = select_samples(dataset, ruleset, limit)
    require_samples(dataset, samples, ruleset.name, dataset_name)
    models = [m for m in {id(m): m for m in (sim_model, sub_model) if m}.values()]
    reports = {}
    for mode in modes:
        config = VerifierConfig(mode=mode, timeout_s=timeout_s, cache_size=0)
        verifier = Verifier(ruleset, sim_model=sim_model, sub_model=sub_model, config=config)
        before = _usage(models)
        verdicts = await _verify_all(
            verifier, samples, concurrency, progress(mode) if progress else None
        )
        after = _usage(models)
        report = mode_report(mode, samples, verdicts, ruleset)
        report.models = {tier: m.name if m else None for tier, m in verifier.models.items()}
        report.prompt_tokens = after["prompt_tokens"] - before["prompt_tokens"]
        report.response_cache_hits = after["cache_hits"] - before["cache_hits"]
        reports[mode] = report
    return RunReport(
        dataset=dataset_name,
        ruleset=ruleset.name,
        ruleset_version=ruleset.version,
        tiers=sorted({rule.tier for rule in ruleset.rules}),
        scored=len(samples),
        not_scored=not_scored,
        modes=reports,
        warnings=run_warnings(dataset.header, ruleset, [m.name for m in models]),
    )
