"""``build``: make a RE-AD-Eval dataset from a rule set and clean seed records.

For each sample (with its own seeded random generator): draw a persona, a clean seed
record, the tier of the violation (in proportion to the persona's error probabilities)
and a rule of that tier that can be broken in the record; then inject exactly one
violation — by a code mutation for ``fmt`` rules, by the generator model for ``sim`` and
``sub`` rules — and keep it only if the independent checks confirm the intended rule fails
and no other. Samples that cannot be confirmed in ``max_iterations`` rounds are dropped
and counted by reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from docket.adherence.record import Record
from docket.adherence.rules import Rule, RuleSet
from docket.adherence.rules.model import Tier
from docket.adherence.verify.verifier import Verifier, VerifierConfig
from docket.errors import ConfigError, InputError
from docket.fanout import bounded_map
from docket.llm import Model
from docket.readeval.dataset import (
    BuildConfig,
    BuildSummary,
    Dataset,
    DatasetHeader,
    RulesetInfo,
    Sample,
)
from docket.readeval.mutations import checkers_without_operator, operators_for, slots
from docket.readeval.operators import MutationContext
from docket.readeval.personas import draw_persona, draw_tier, sample_rng
from docket.readeval.rewrite import Generation, inject_llm, write_dialogue
from docket.readeval.setup import (
    BuildModels,
    build_warnings,
    dialogue_roles,
    resolve_tiers,
)
from docket.readeval.truth import Dropped, GroundTruth, Injected, inject_fmt
from docket.version import __version__

Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class Drop:
    """A sample that was not kept."""

    index: int
    persona: str
    tier: str
    rule_id: str
    reason: str
    detail: str = ""


@dataclass
class BuildResult:
    """The dataset, the dropped samples, warnings, and model usage of the build."""

    dataset: Dataset
    drops: list[Drop]
    warnings: list[str]
    usage: dict[str, dict[str, float | int]] = field(default_factory=dict)


def injectable(tier: Tier, ruleset: RuleSet, record: Record) -> list[Rule]:
    """The rules of ``tier`` that can be broken in ``record``."""
    rules = ruleset.by_tier(tier)
    if tier == "fmt":
        return [
            r
            for r in rules
            if any(op.level == "record" for op in operators_for(r))
            or (operators_for(r) and slots(r, record))
        ]
    return [
        r for r in rules if r.scope.targets(record) and (r.scope.kind != "record" or record.turns)
    ]


def judge_verifier(
    ruleset: RuleSet, models: BuildModels, timeout_s: float = 60.0
) -> Verifier | None:
    """The judge: a verifier over the sim/sub rules with the judge models (None without)."""
    llm_rules = [rule for rule in ruleset.rules if rule.tier != "fmt"]
    if not llm_rules or (models.judge_sim is None and models.judge_sub is None):
        return None
    subset = ruleset.model_copy(update={"rules": llm_rules})
    config = VerifierConfig(timeout_s=timeout_s)
    return Verifier(subset, sim_model=models.judge_sim, sub_model=models.judge_sub, config=config)


class _Builder:
    """The state of one build: rules, checks, models and the clean seeds."""

    def __init__(self, ruleset: RuleSet, config: BuildConfig, models: BuildModels) -> None:
        self.ruleset, self.config, self.models = ruleset, config, models
        self.tiers = resolve_tiers(config, ruleset, models)
        self.truth = GroundTruth(ruleset, judge_verifier(ruleset, models, config.judge_timeout_s))
        self.generation = (
            Generation(
                models.generator, config.temperature, config.max_tokens, config.max_iterations
            )
            if models.generator
            else None
        )

    async def clean(self, seeds: Sequence[Record], limit: int) -> dict[str, str]:
        """``{seed id: why it is not clean}`` for seeds that break a rule."""

        async def check(seed: Record) -> tuple[str, str]:
            problems = await self.truth.problems(seed, None)
            return seed.id, "; ".join(p.short() for p in problems)

        found = await bounded_map(seeds, check, limit=limit)
        return {seed_id: why for seed_id, why in found if why}

    async def sample(self, index: int, seeds: Sequence[Record]) -> Sample | Drop:
        """Draw and inject sample ``index``."""
        rng = sample_rng(self.config.seed, index)
        persona = draw_persona(rng, self.config.personas)
        source = rng.choice(list(seeds))
        options = {tier: injectable(tier, self.ruleset, source) for tier in self.tiers}
        tier = draw_tier(rng, persona, [t for t in self.tiers if options[t]])
        if tier is None:
            return Drop(index, persona.name, "-", "-", "no injectable rule")
        rule = rng.choice(options[tier])
        ctx = MutationContext(rng, persona)
        if tier == "fmt":
            outcome = await inject_fmt(rule, source, self.truth, ctx, self.config.max_iterations)
        else:
            assert self.generation is not None  # resolve_tiers guarantees a generator
            outcome = await inject_llm(rule, source, self.truth, ctx, self.generation)
        if isinstance(outcome, Dropped):
            return Drop(index, persona.name, tier, rule.id, outcome.reason, outcome.detail)
        return _sample(index, persona.name, rule, source, outcome)


def _sample(index: int, persona: str, rule: Rule, source: Record, outcome: Injected) -> Sample:
    sample_id = f"s{index:05d}"
    return Sample(
        id=sample_id,
        persona=persona,
        tier=rule.tier,
        rule_id=rule.id,
        operator=outcome.mutation.operator,
        record=outcome.mutation.record.model_copy(update={"id": sample_id}),
        source_id=source.id,
        iterations=outcome.iterations,
        turn=outcome.mutation.turn,
    )


async def _generated_seeds(
    builder: _Builder, scenarios: Sequence[Record], limit: int
) -> tuple[list[Record], dict[str, str]]:
    """New clean dialogues written for the scenarios; failures by scenario id."""
    if not scenarios:
        return [], {}
    if builder.generation is None:
        raise ConfigError("scenarios need a generator model", hint="pass --generator-model")
    roles = dialogue_roles(builder.ruleset)

    async def one(item: tuple[int, Record]) -> Record | Dropped:
        position, scenario = item
        seed = sample_rng(builder.config.seed, -1 - position).randrange(2**31)
        return await write_dialogue(scenario, builder.truth, builder.generation, roles, seed)  # type: ignore[arg-type]

    outcomes = await bounded_map(enumerate(scenarios), one, limit=limit)
    made = [o for o in outcomes if isinstance(o, Record)]
    failed = {
        s.id: f"dialogue not written: {o.reason}"
        for s, o in zip(scenarios, outcomes, strict=True)
        if isinstance(o, Dropped)
    }
    return made, failed


def _summary(attempted: int, samples: list[Sample], drops: list[Drop]) -> BuildSummary:
    kept_by: dict[str, Counter[str]] = {}
    for sample in samples:
        kept_by.setdefault(sample.tier, Counter())[sample.persona] += 1
    dropped_by: dict[str, Counter[str]] = {}
    for drop in drops:
        dropped_by.setdefault(drop.tier, Counter())[drop.reason] += 1
    iterations = Counter(str(sample.iterations) for sample in samples)
    return BuildSummary(
        attempted=attempted,
        kept=len(samples),
        kept_by={tier: dict(sorted(c.items())) for tier, c in sorted(kept_by.items())},
        dropped_by={tier: dict(sorted(c.items())) for tier, c in sorted(dropped_by.items())},
        iterations=dict(sorted(iterations.items())),
    )


def _ruleset_info(ruleset: RuleSet) -> RulesetInfo:
    return RulesetInfo(
        name=ruleset.name,
        version=ruleset.version,
        versions={rule.id: rule.version for rule in ruleset.rules},
        tiers={rule.id: rule.tier for rule in ruleset.rules},
    )


async def build_dataset(
    ruleset: RuleSet,
    seeds: Sequence[Record],
    config: BuildConfig | None = None,
    models: BuildModels | None = None,
    *,
    scenarios: Sequence[Record] = (),
    concurrency: int = 4,
    progress: Progress | None = None,
) -> BuildResult:
    """Build a RE-AD-Eval dataset (see the module docstring).

    Args:
        ruleset: the rules (a :class:`~docket.adherence.rules.RuleSet`).
        seeds: clean records; those breaking a rule are skipped and listed in the header.
        config: build settings (samples, seed, personas, tiers, rounds).
        models: generator and judge models; none for a code-only (fmt) build.
        scenarios: records with fields only; the generator writes a clean dialogue for each.
        concurrency: samples processed at once.
        progress: called with (done, total) after each sample.

    Raises:
        ConfigError: an LLM tier without a generator or judge.
        InputError: no seed (given or generated) passes every rule.
    """
    config, models = config or BuildConfig(), models or BuildModels()
    builder = _Builder(ruleset, config, models)
    made, failed = await _generated_seeds(builder, scenarios, concurrency)
    skipped = {**await builder.clean(seeds, concurrency), **failed}
    clean = [seed for seed in [*seeds, *made] if seed.id not in skipped]
    if not clean:
        first = next(iter(skipped.items()), ("-", "no seeds given"))
        raise InputError(
            f"no seed record passes every rule (e.g. '{first[0]}': {first[1][:300]})",
            hint="give seed records that follow every rule",
        )
    done = 0

    def report(_index: int, _outcome: Sample | Drop) -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, config.samples)

    outcomes = await bounded_map(
        range(config.samples),
        lambda index: builder.sample(index, clean),
        limit=concurrency,
        on_done=report,
    )
    samples = [o for o in outcomes if isinstance(o, Sample)]
    drops = [o for o in outcomes if isinstance(o, Drop)]
    header = _header(builder, clean, skipped, made, _summary(config.samples, samples, drops))
    usage = {m.name: m.usage.to_json() for m in _distinct(models)}
    return BuildResult(Dataset(header=header, samples=samples), drops, header.warnings, usage)


def _header(
    builder: _Builder,
    clean: list[Record],
    skipped: dict[str, str],
    made: list[Record],
    summary: BuildSummary,
) -> DatasetHeader:
    return DatasetHeader(
        docket_version=__version__,
        config=builder.config,
        models=builder.models.names(),
        ruleset=_ruleset_info(builder.ruleset),
        tiers=builder.tiers,
        judge_checked=builder.truth.judged,
        seeds=[seed.id for seed in clean],
        skipped_seeds=skipped,
        generated_seeds=[seed.id for seed in made],
        summary=summary,
        operators_missing=checkers_without_operator(),
        warnings=build_warnings(builder.config, builder.ruleset, builder.models),
    )


def _distinct(models: BuildModels) -> list[Model]:
    found: dict[int, Model] = {}
    for model in (models.generator, models.judge_sim, models.judge_sub):
        if model is not None:
            found.setdefault(id(model), model)
    return list(found.values())
