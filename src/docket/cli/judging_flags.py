"""The judge, model and executor flags of every judging command, declared once.

``docket judge``, ``holes fill``, ``holes simulate`` and ``eval methods`` take the same
flags with the same names, types, defaults and help, because each is declared here once
and added to a command by :func:`judging_command`. The command itself receives one
:class:`JudgingFlags` value and turns it into a :class:`~docket.jobs.JobSpec`, so the flags
mean exactly what the library's keyword arguments mean.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from docket.jobs.spec import JobSpec

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
    Flag("seed", _judge(int | None, "majority: seed of the first vote (vote i uses seed + i)")),
    Flag("lara_budget", _judge(float | None, "lara: share of pairs sent to humans (0.035)")),
)  # fmt: skip
JOB_FLAGS: tuple[Flag, ...] = (
    Flag("db", _job(str | None, "store path or SQLAlchemy URL (default docket.db)")),
    Flag("concurrency", _job(int | None, "pairs judged at once (default: --max-in-flight)")),
    Flag("reviews", _job(int, "independent reviewers per escalated pair", min=1), 1),
    Flag("retry_failed", _job(bool, "judge again the pairs a server refused in earlier runs"), False),
    Flag("allow_failed", _job(bool, "exit 0 although pairs failed (default: exit 3)"), False),
    Flag("executor", _job(str | None, "local | ray (Ray workers, each with its own model)")),
    Flag("ray_address", _job(str | None, "Ray cluster: auto or HOST:PORT (default: start one)")),
    Flag("ray_workers", _job(int | None, "Ray actors (default 2)")),
)  # fmt: skip
FLAGS: tuple[Flag, ...] = MODEL_FLAGS + JUDGE_FLAGS + JOB_FLAGS
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
        values = dict(self.values)
        agent_models = values.pop("agent_model", None)
        values["budget"] = values.pop("lara_budget", None)
        reviews, retry_failed = values.pop("reviews", 1), values.pop("retry_failed", False)
        values.pop("allow_failed", None)  # how the command exits, not how it judges
        return JobSpec.of(
            method, methods=tuple(methods) if methods else None, reviews=reviews,
            retry_failed=retry_failed, agent_models=agent_models or None, **values,
        )  # fmt: skip

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
        return command(**{k: v for k, v in kwargs.items() if k not in names}, judging=flags)

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
