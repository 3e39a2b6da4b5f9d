"""The shared option groups of the judging commands, declared once, taken per command.

Each group (model, judge, job, executor, run, price, plan, caps, pilot) is a tuple of
:class:`Flag` values; a model, judge or job flag is derived from its field of
:class:`~docket.config.Settings` or :class:`~docket.relevance.JudgeOptions` (type, default
and help written once, there). A command names the groups it reads with
:func:`judging_command`, so a flag a command does not read does not exist on it; the command
receives one :class:`JudgingFlags` value and turns it into a :class:`~docket.jobs.JobSpec`.
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel

from docket.cli.plan_print import print_planned_vs_actual
from docket.config import Settings
from docket.errors import ConfigError
from docket.jobs.bill.caps import Caps
from docket.jobs.bill.figures import PlanInputs
from docket.jobs.bill.live import LiveSpend
from docket.jobs.bill.pilot import PilotGate
from docket.jobs.spec import JobSpec
from docket.relevance.options import METHOD_FIELDS, JudgeOptions
from docket.relevance.prompts import read_instructions

MethodOpt = Annotated[str, typer.Option(help="dream | single | lara | majority")]
"""``--method`` of the commands that run one method."""


@dataclass(frozen=True)
class Flag:
    """One shared flag: its parameter name, typer annotation and default."""

    name: str
    annotation: Any
    default: Any = None


def _opt(kind: Any, text: str, panel: str, **extra: Any) -> Any:
    return Annotated[kind, typer.Option(help=text, rich_help_panel=panel, **extra)]


def _cli_type(annotation: Any) -> Any:
    """The flag type of a settings field: Literal and str-like become ``str``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _cli_type(inner[0])
    if typing.get_origin(annotation) is typing.Literal:
        return str
    if typing.get_origin(annotation) is list:
        return list[str]
    return annotation


def field_flag(model: type[BaseModel], field: str, panel: str, *, name: str = "",
               help_text: str = "") -> Flag:  # fmt: skip
    """A flag for ``model``'s ``field``: its type, description and default, as declared there."""
    info = model.model_fields[field]
    kind = _cli_type(info.annotation)
    default = "" if info.default_factory is not None else info.default
    shown = "" if default in (None, "", []) else f" ({default})"
    text = (help_text or info.description or field) + shown
    return Flag(name or field, _opt(kind | None, text, panel))


def _settings(*names: str, panel: str) -> tuple[Flag, ...]:
    return tuple(field_flag(Settings, n, panel) for n in names)


def _judge_flag(field: str) -> Flag:
    owner = next((m for m, fields in METHOD_FIELDS.items() if field in fields), "")
    description = JudgeOptions.model_fields[field].description or field
    text = f"{owner}: {description}" if owner else description
    name = "agent_model" if field == "agent_models" else field
    return field_flag(JudgeOptions, field, "Judge options", name=name, help_text=text)


def _bill(kind: Any, text: str, panel: str = "Plan and price options", **extra: Any) -> Any:
    return _opt(kind, text, panel, **extra)


MODEL = _settings("model", "max_in_flight", "timeout", "max_retries", "cache",
                  panel="Model options") + (
    _judge_flag("temperature"),
)  # fmt: skip
JUDGE = tuple(_judge_flag(f) for f in (
    "rounds", "stances", "agents", "agent_models", "adjudicator", "scale", "samples", "seed",
    "lara_budget")) + (
    Flag("instructions", _opt(Path | None, "Markdown file: the collection's definition of relevance (and, under '## Grades', of each grade) instead of docket's", "Judge options")),
)  # fmt: skip
JOB = _settings("db", "concurrency", panel="Job options") + (
    Flag("reviews", _opt(int, "independent reviewers per escalated pair", "Job options", min=1), 1),
    Flag("limit", _opt(int | None, "judge only the first N pairs (after --sample)", "Job options", min=1)),
    Flag("sample", _opt(int | None, "judge a random sample of N pairs, drawn with --seed", "Job options", min=1)),
    Flag("retry_failed", _opt(bool, "judge again the pairs a server refused in earlier runs", "Job options"), False),
)  # fmt: skip
RUN = (Flag("allow_failed", _opt(bool, "exit 0 although pairs failed (default: exit 3)", "Job options"), False),)  # fmt: skip
EXECUTOR = _settings("executor", "ray_address", "ray_workers", panel="Executor options")
PRICE = (
    Flag("price_input", _bill(float | None, "USD per million input tokens of --model")),
    Flag("price_cached_input", _bill(float | None, "USD per million cached input tokens")),
    Flag("price_output", _bill(float | None, "USD per million output tokens")),
)
PLAN = (
    Flag("latency", _bill(float | None, "seconds per LLM call, for the plan's time estimate")),
    Flag("review_seconds", _bill(float | None, "seconds per review decision (default: the store's median, else 60)")),
)  # fmt: skip
PLAN_ONLY = (Flag("plan", _bill(bool, "print what the job would cost (calls, tokens, USD, time, reviews); no LLM call"), False),)  # fmt: skip
CAPS = tuple(
    Flag(f"max_{n}", _bill(kind | None, f"stop before the job's {what} pass {unit} (exit 5)", "Spend caps"))
    for n, kind, what, unit in (("cost", float, "spend", "USD"), ("calls", int, "LLM calls", "N"),
                                ("tokens", int, "tokens", "N"), ("escalations", int, "escalations", "N"))
)  # fmt: skip
PILOT = (
    Flag("pilot", _bill(int | None, "judge a seeded stratified sample of N pairs first, measure it, re-plan", "Pilot options")),
    Flag("min_kappa", _bill(float | None, "pilot: stop before the main run if Cohen's kappa is lower (exit 4)", "Pilot options")),
    Flag("max_escalation", _bill(float | None, "pilot: stop before the main run if more pairs escalate (share, exit 4)", "Pilot options")),
)  # fmt: skip
GROUPS: dict[str, tuple[Flag, ...]] = {
    "model": MODEL, "judge": JUDGE, "job": JOB, "run": RUN, "executor": EXECUTOR,
    "price": PRICE, "plan": PLAN, "plan_only": PLAN_ONLY, "caps": CAPS, "pilot": PILOT,
}  # fmt: skip
"""Every shared option group, by name, in the order ``--help`` lists them."""
RUNNING = ("model", "judge", "job", "run", "executor", "price", "caps")
"""The groups of a command that judges (holes fill, holes simulate, eval methods)."""
SPEC_NAMES = tuple(f.name for group in ("model", "judge", "job", "executor") for f in GROUPS[group])
"""The flags a :class:`~docket.jobs.JobSpec` is built from (the others are the bill's)."""


@dataclass(frozen=True)
class JudgingFlags:
    """The values of the shared flags as one command received them (None: not given)."""

    values: dict[str, Any]

    def spec(self, method: str = "dream", methods: Sequence[str] | None = None) -> JobSpec:
        """The job spec these flags ask for, checked (refuses options the method ignores).

        Raises:
            ConfigError: an invalid value or an option that ``method`` does not read.
        """
        v = self.values
        values = {name: v.get(name) for name in SPEC_NAMES}  # None: not given (or not taken)
        agent_models = values.pop("agent_model", None)
        instructions = values.pop("instructions", None)
        values["instructions"] = read_instructions(instructions) if instructions else None
        reviews, retry_failed = values.pop("reviews") or 1, bool(values.pop("retry_failed"))
        limit, sample = values.pop("limit"), values.pop("sample")
        spec = JobSpec.of(
            method, methods=tuple(methods) if methods else None, reviews=reviews,
            retry_failed=retry_failed, limit=limit, sample=sample, caps=self.caps(),
            plan_inputs=self.plan_inputs(), agent_models=agent_models or None, **values,
        )  # fmt: skip
        # A command's run plans itself at its start (planned against actual is printed after
        # it) and fills a live spend for the progress line.
        bill = replace(spec.bill, track=True, live=LiveSpend())
        return replace(spec, bill=bill)

    @property
    def plan(self) -> bool:
        """``--plan``: print the job's plan instead of running it."""
        return bool(self.values.get("plan"))

    def plan_inputs(self) -> PlanInputs:
        """Prices, latency and review seconds for :func:`docket.jobs.plan_job`."""
        v = self.values
        prices = {k: v.get(f"price_{k}") for k in ("input", "cached_input", "output")}
        return PlanInputs(prices, v.get("latency"), v.get("review_seconds"))

    def caps(self) -> Caps:
        """``--max-cost``, ``--max-calls``, ``--max-tokens``, ``--max-escalations`` (checked)."""
        v = self.values
        return Caps(v.get("max_cost"), v.get("max_calls"), v.get("max_tokens"),
                    v.get("max_escalations"))  # fmt: skip

    def pilot(self) -> tuple[int, PilotGate | None]:
        """``--pilot N`` and its gate; a gate without a pilot is refused (it could not act).

        Raises:
            ConfigError: ``--min-kappa`` or ``--max-escalation`` without ``--pilot``.
        """
        v = self.values
        n = v.get("pilot") or 0
        gate = PilotGate(v.get("min_kappa"), v.get("max_escalation"))
        given = [f for f in ("min_kappa", "max_escalation") if v.get(f) is not None]
        if given and not n:
            flag = "--" + given[0].replace("_", "-")
            raise ConfigError(f"{flag} gates a pilot: it needs --pilot N", hint="e.g. --pilot 20")
        return n, (gate if given else None)

    @property
    def db(self) -> str | None:
        """``--db`` as given."""
        return self.values.get("db")

    @property
    def allow_failed(self) -> bool:
        """``--allow-failed``: pairs a server refused do not make the exit code non-zero."""
        return bool(self.values.get("allow_failed"))


def judging_command(*groups: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Add the flags of ``groups`` to a typer command whose last parameter is ``judging``.

    The wrapper's signature is the command's own parameters followed by the groups' flags,
    so typer lists and parses exactly those; the command gets them back as one
    :class:`JudgingFlags`.
    """
    flags = [f for group in GROUPS if group in groups for f in GROUPS[group]]
    unknown = set(groups) - set(GROUPS)
    if unknown:
        raise ValueError(f"unknown option groups: {sorted(unknown)}")

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        own = [p for p in _parameters(command) if p.name != "judging"]
        shared = [
            inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                              annotation=f.annotation)
            for f in flags
        ]  # fmt: skip
        names = {f.name for f in flags}

        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> Any:
            judging = JudgingFlags({k: v for k, v in kwargs.items() if k in names})
            result = command(**{k: v for k, v in kwargs.items() if k not in names}, judging=judging)
            print_planned_vs_actual(getattr(result, "run", result))
            return result

        wrapper.__signature__ = inspect.Signature(own + shared)  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in own + shared}
        wrapper.groups = tuple(groups)  # type: ignore[attr-defined]
        del wrapper.__wrapped__  # typer must read the new signature, not the command's
        return wrapper

    return decorate


def _parameters(command: Callable[..., Any]) -> list[inspect.Parameter]:
    # eval_str: the CLI modules use ``from __future__ import annotations``.
    signature = inspect.signature(command, eval_str=True)
    return [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in signature.parameters.values()]


PathArg = Annotated[
    Path, typer.Argument(metavar="PAIRS", help="JSONL or TSV: qid, query, docid, text[, label]")
]
"""The pairs file argument of ``docket judge``, ``docket plan`` and ``docket eval methods``."""
