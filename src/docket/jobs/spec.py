"""What a judging job is asked to do: judge options, settings, and how it treats reviews.

A :class:`JobSpec` is built once, from keyword arguments (a notebook) or from the shared
command-line flags (every judging command), and is all :func:`docket.jobs.run_job` needs
besides the pairs.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from docket.config import Settings, load_settings
from docket.errors import ConfigError
from docket.jobs.bill.caps import Bill, Caps
from docket.jobs.bill.figures import PlanInputs
from docket.jobs.inputs import JobInput, job_input, select_input
from docket.llm.provider import parse_model_name
from docket.llm.usage import Price
from docket.relevance.options import JudgeOptions, check_applicable

log = logging.getLogger(__name__)
SETTING_NAMES = frozenset(Settings.model_fields)
OPTION_NAMES = frozenset(JudgeOptions.model_fields) - {"method"}


@dataclass(frozen=True)
class JobSpec:
    """How to judge, with what, where, and what happens to escalations.

    Attributes:
        options: the relevance method and its options.
        settings: model, store, cache, concurrency, limits and executor.
        reviews: independent reviewers asked per escalated pair.
        retry_failed: judge again the pairs a server refused in earlier runs.
        limit: judge only the input's first ``limit`` pairs (after ``sample``).
        sample: judge a random sample of this many pairs, drawn with ``options.seed``.
        bill: spend caps, the main model's price and plan inputs
            (:class:`~docket.jobs.bill.caps.Bill`): the one place a job's caps and price live.
    """

    options: JudgeOptions
    settings: Settings
    reviews: int = 1
    retry_failed: bool = False
    limit: int | None = None
    sample: int | None = None
    bill: Bill = field(default_factory=Bill)

    @classmethod
    def of(
        cls,
        method: str = "dream",
        *,
        methods: tuple[str, ...] | None = None,
        reviews: int = 1,
        retry_failed: bool = False,
        limit: int | None = None,
        sample: int | None = None,
        config_path: Path | None = None,
        caps: Caps | None = None,
        price: Price | None = None,
        plan_inputs: PlanInputs | None = None,
        **values: Any,
    ) -> JobSpec:
        """Build a spec from keyword arguments, the way every command does.

        ``values`` may hold any :class:`~docket.config.Settings` field (``model``, ``db``,
        ``max_in_flight``, ...) and any :class:`~docket.relevance.JudgeOptions` field
        (``rounds``, ``agent_models``, ...); None means "not given" (the setting comes from
        ``docket.toml``, the environment or the default). ``limit`` and ``sample`` pick a
        quick look at the input (:func:`~docket.jobs.select_input`; ``seed`` seeds the
        sample). Options that ``method`` (or every
        one of ``methods``) does not read are refused, as on the command line. ``caps``,
        ``price`` and ``plan_inputs`` make the spec's :class:`~docket.jobs.bill.caps.Bill`.

        Raises:
            ConfigError: an unknown name, an invalid value, or an option the method ignores.
        """
        unknown = sorted(set(values) - SETTING_NAMES - OPTION_NAMES)
        if unknown:
            raise ConfigError(
                f"unknown job option(s): {', '.join(unknown)}",
                hint="see help(docket.jobs.JobSpec.of) for the accepted names",
            )
        for name, value in (("reviews", reviews), ("limit", limit), ("sample", sample)):
            if value is not None and value < 1:
                raise ConfigError(f"{name} must be at least 1", hint=f"e.g. {name}=2")
        settings = load_settings(
            config_path, **{k: v for k, v in values.items() if k in SETTING_NAMES}
        )
        given = {k: v for k, v in values.items() if k in OPTION_NAMES and v is not None}
        options = JudgeOptions.checked(method=method, **given)
        check_applicable(list(methods) if methods else method, options)
        bill = Bill(caps or Caps(), price, plan_inputs or PlanInputs())
        return cls(options, settings, reviews, retry_failed, limit, sample, bill)

    @property
    def method(self) -> str:
        """The relevance method."""
        return self.options.method

    def select(self, loaded: JobInput) -> JobInput:
        """The part of ``loaded`` this spec judges (``limit`` / seeded ``sample``)."""
        return select_input(loaded, limit=self.limit, sample=self.sample, seed=self.options.seed)

    def load(self, pairs: Any) -> JobInput:
        """The pairs this spec judges of ``pairs`` (a file, DataFrame or Pairs), checked whole.

        Duplicate pairs are judged once (a warning says how many).
        """
        loaded = self.select(job_input(pairs))
        if loaded.duplicates:
            log.warning("%s: %d duplicate pairs judged once", loaded.source, loaded.duplicates)
        return loaded

    def job_name(self, loaded: JobInput, job: str | None = None) -> str:
        """``job``, or the default name of a job of ``loaded``: the input's stem and the method."""
        return job or f"{loaded.stem}-{self.method}"

    @property
    def model_name(self) -> str:
        """The main model's canonical name: what a job records.

        Call parameters such as ``?max_in_flight=`` change how calls are made, not what
        they answer, so they stay out of the job (a rerun that changes them resumes).
        """
        return canonical_model(self.settings.model)

    def with_method(self, method: str, **changes: Any) -> JobSpec:
        """The same spec for another method (and option changes), e.g. per compared method."""
        options = self.options.model_copy(update={"method": method, **changes})
        return replace(self, options=options)


def canonical_model(name: str) -> str:
    """A model name without its call parameters (what a job records)."""
    return parse_model_name(name).name
