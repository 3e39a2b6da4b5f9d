"""The judge, model and executor flags of every judging command, declared once.

``docket judge``, ``holes fill``, ``holes simulate`` and ``eval methods`` take the same
flags with the same names, types, defaults and help, because each is declared here once
and added to a command by :func:`judging_command`. The command itself receives one
:class:`JudgingFlags` value and turns it into a :class:`~docket.jobs.JobSpec`, so the flags
mean exactly what the library's keyword arguments mean.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from docket.cli.plan_print import (
    print_pilot,
    print_plan,
    print_planned_vs_actual,
    stop_if_capped,
)
from docket.errors import PilotRejectedError
from docket.jobs.caps import Bill, Caps
from docket.jobs.live import LiveSpend
from docket.jobs.pilot import PilotGate
from docket.jobs.plan import PlanMade
from docket.jobs.plan_figures import PlanInputs
from docket.jobs.prices import load_price_table, quote
from docket.jobs.spec import JobSpec
from docket.llm.usage import Price
from docket.relevance.prompts import read_instructions

MethodOpt = Annotated[str, typer.Option(help="dream | single | lara | majority")]
"""``--method`` of the commands that run one method."""


@dataclass(frozen=True)
class Flag:
    """One shared flag: its parameter name, typer annotation and default."""

    name: str
    annotation: Any
    default: Any = None


def _opt(kind: Any, text: str, panel: str = "", **extra: Any) -> Any:
    return Annotated[kind, typer.Option(help=text, rich_help_panel=panel or None, **extra)]


def _model(kind: Any, text: str, **extra: Any) -> Any:
    return _opt(kind, text, "Model options", **extra)


def _judge(kind: Any, text: str, **extra: Any) -> Any:
    return _opt(kind, text, "Judge options", **extra)


def _job(kind: Any, text: str, **extra: Any) -> Any:
    return _opt(kind, text, "Job and executor options", **extra)


MODEL_FLAGS: tuple[Flag, ...] = (
    Flag("model", _model(str | None, "model name (default: local)")),
    Flag("max_in_flight", _model(int | None, "LLM calls in flight per model (default 64 served, 1 local)")),
    Flag("timeout", _model(float | None, "seconds per LLM request before a retry (120)")),
    Flag("max_retries", _model(int | None, "retries per LLM call on transient failures (4)")),
    Flag("cache", _model(str | None, "response cache file, or 'off'")),
    Flag("temperature", _model(float | None, "sampling temperature of every call (0)")),
)  # fmt: skip
JUDGE_FLAGS: tuple[Flag, ...] = (
    Flag("rounds", _judge(int | None, "dream: debate rounds R (2)")),
    Flag("stances", _judge(str | None, "dream: opposing | swapped | neutral")),
    Flag("agents", _judge(int | None, "dream: debating agents, consensus = unanimous (2)")),
    Flag("agent_model", _judge(list[str] | None, "dream: model per agent (repeat the flag)")),
    Flag("adjudicator", _judge(str | None, "dream: LLM adjudicator model instead of a human")),
    Flag("scale", _judge(str | None, "single: binary | graded")),
    Flag("samples", _judge(int | None, "majority: votes per pair (5)")),
    Flag("seed", _judge(int | None, "the run's seed: --sample, majority votes (seed + i), calls at --temperature > 0 (0)")),
    Flag("lara_budget", _judge(float | None, "lara: share of pairs sent to humans (0.035)")),
    Flag("instructions", _judge(Path | None, "Markdown file: the collection's definition of relevance (and, under '## Grades', of each grade) instead of docket's")),
)  # fmt: skip
JOB_FLAGS: tuple[Flag, ...] = (
    Flag("db", _job(str | None, "store path or SQLAlchemy URL (default docket.db)")),
    Flag("concurrency", _job(int | None, "pairs judged at once (default: --max-in-flight)")),
    Flag("reviews", _job(int, "independent reviewers per escalated pair", min=1), 1),
    Flag("limit", _job(int | None, "judge only the first N pairs (after --sample)", min=1)),
    Flag("sample", _job(int | None, "judge a random sample of N pairs, drawn with --seed", min=1)),
    Flag("retry_failed", _job(bool, "judge again the pairs a server refused in earlier runs"), False),
    Flag("allow_failed", _job(bool, "exit 0 although pairs failed (default: exit 3)"), False),
    Flag("executor", _job(str | None, "local | ray (Ray workers, each with its own model)")),
    Flag("ray_address", _job(str | None, "Ray cluster: auto or HOST:PORT (default: start one)")),
    Flag("ray_workers", _job(int | None, "Ray actors (default 2)")),
)  # fmt: skip


def _bill(kind: Any, text: str, *decls: str, **extra: Any) -> Any:
    return Annotated[
        kind, typer.Option(*decls, help=text, rich_help_panel="Plan and budget options", **extra)
    ]


PLAN_FLAGS: tuple[Flag, ...] = (
    Flag("plan", _bill(bool, "print what the job would cost (calls, tokens, USD, time, reviews); no LLM call"), False),
    Flag("price_input", _bill(float | None, "USD per million input tokens of --model")),
    Flag("price_cached_input", _bill(float | None, "USD per million cached input tokens")),
    Flag("price_output", _bill(float | None, "USD per million output tokens")),
    Flag("latency", _bill(float | None, "seconds per LLM call, for the plan's time estimate")),
    Flag("review_seconds", _bill(float | None, "seconds per review decision (default: the store's median, else 60)")),
    Flag("max_cost", _bill(float | None, "stop before the job's spend passes USD (exit 5)")),
    Flag("max_calls", _bill(int | None, "stop before the job's LLM calls pass N (exit 5)")),
    Flag("max_tokens", _bill(int | None, "stop before the job's tokens pass N (exit 5)")),
    Flag("max_escalations", _bill(int | None, "stop before the job's escalations pass N (exit 5)")),
    Flag("pilot", _bill(int | None, "judge a seeded stratified sample of N pairs first, measure it, re-plan")),
    Flag("min_kappa", _bill(float | None, "pilot: stop before the main run if Cohen's kappa is lower (exit 4)")),
    Flag("max_escalation", _bill(float | None, "pilot: stop before the main run if more pairs escalate (share, exit 4)")),
)  # fmt: skip
PLAN_NAMES = frozenset(f.name for f in PLAN_FLAGS)
FLAGS: tuple[Flag, ...] = MODEL_FLAGS + JUDGE_FLAGS + JOB_FLAGS + PLAN_FLAGS
"""Every shared flag, in the order ``--help`` lists them."""


@dataclass(frozen=True)
class JudgingFlags:
    """The values of the shared flags as one command received them (None: not given)."""

    values: dict[str, Any]

    def spec(self, method: str = "dream", methods: Sequence[str] | None = None) -> JobSpec:
        """The job spec these flags ask for, checked (refuses options the method ignores).

        Raises:
            ConfigError: an invalid value or an option that ``method`` does not read.
        """
        values = {k: v for k, v in self.values.items() if k not in PLAN_NAMES}
        agent_models = values.pop("agent_model", None)
        values["budget"] = values.pop("lara_budget", None)
        instructions = values.pop("instructions", None)
        values["instructions"] = read_instructions(instructions) if instructions else None
        reviews, retry_failed = values.pop("reviews", 1), values.pop("retry_failed", False)
        limit, sample = values.pop("limit", None), values.pop("sample", None)
        values.pop("allow_failed", None)  # how the command exits, not how it judges
        spec = JobSpec.of(
            method, methods=tuple(methods) if methods else None, reviews=reviews,
            retry_failed=retry_failed, limit=limit, sample=sample,
            agent_models=agent_models or None, **values,
        )  # fmt: skip
        v = self.values
        gate = PilotGate(v.get("min_kappa"), v.get("max_escalation"))
        bill = Bill(self.caps(), self.price(spec), self.plan, self.plan_inputs(),
                    v.get("pilot") or 0, gate, track=True, live=LiveSpend())  # fmt: skip
        return dataclasses.replace(spec, bill=bill)

    @property
    def plan(self) -> bool:
        """``--plan``: print the job's plan instead of running it."""
        return bool(self.values.get("plan"))

    def plan_inputs(self) -> PlanInputs:
        """Prices, latency and review seconds for :func:`docket.jobs.plan.plan_job`."""
        v = self.values
        prices = {k: v.get(f"price_{k}") for k in ("input", "cached_input", "output")}
        return PlanInputs(prices, v.get("latency"), v.get("review_seconds"))

    def caps(self) -> Caps:
        """``--max-cost``, ``--max-calls``, ``--max-tokens``, ``--max-escalations`` (checked)."""
        v = self.values
        return Caps(v.get("max_cost"), v.get("max_calls"), v.get("max_tokens"),
                    v.get("max_escalations"))  # fmt: skip

    def price(self, spec: JobSpec) -> Price:
        """The main model's price: the price flags, docket.toml, the dated table, or 0."""
        return quote(spec.model_name, load_price_table(), self.plan_inputs().prices).price

    @property
    def db(self) -> str | None:
        """``--db`` as given."""
        return self.values.get("db")

    @property
    def allow_failed(self) -> bool:
        """``--allow-failed``: pairs a server refused do not make the exit code non-zero."""
        return bool(self.values.get("allow_failed"))


def judging_command(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the shared flags to a typer command whose last parameter is ``judging: JudgingFlags``.

    The wrapper's signature is the command's own parameters followed by :data:`FLAGS`, so
    typer lists and parses them; the command gets them back as one :class:`JudgingFlags`.
    """
    own = [p for p in _parameters(command) if p.name != "judging"]
    shared = [
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                          annotation=f.annotation)
        for f in FLAGS
    ]  # fmt: skip
    names = {f.name for f in FLAGS}

    @functools.wraps(command)
    def wrapper(**kwargs: Any) -> Any:
        flags = JudgingFlags({k: v for k, v in kwargs.items() if k in names})
        try:
            result = command(**{k: v for k, v in kwargs.items() if k not in names}, judging=flags)
        except PlanMade as made:  # --plan: the job was planned, not run
            print_plan(made.plan)
            return None
        except PilotRejectedError as exc:  # the pilot's judgments are saved
            print_pilot(exc.report)
            typer.secho(f"error: {exc.one_line()}", err=True, fg=typer.colors.RED)
            raise typer.Exit(4) from None
        print_pilot(getattr(getattr(result, "run", result), "pilot", None))
        print_planned_vs_actual(getattr(result, "run", result))
        stop_if_capped(result)
        return result

    wrapper.__signature__ = inspect.Signature(own + shared)  # type: ignore[attr-defined]
    wrapper.__annotations__ = {p.name: p.annotation for p in own + shared}
    del wrapper.__wrapped__  # typer must read the new signature, not the command's
    return wrapper


def _parameters(command: Callable[..., Any]) -> list[inspect.Parameter]:
    # eval_str: the CLI modules use ``from __future__ import annotations``.
    signature = inspect.signature(command, eval_str=True)
    return [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in signature.parameters.values()]


PathArg = Annotated[
    Path, typer.Argument(metavar="PAIRS", help="JSONL or TSV: qid, query, docid, text[, label]")
]
"""The pairs file argument of ``docket judge`` and ``docket eval methods``."""
