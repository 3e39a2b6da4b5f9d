"""The provider protocol and the registry that turns model names into providers.

Model names look like ``openai:gpt-4o-mini``,
``openai-compatible:http://host:8000/v1#llama-3.3-70b``, ``local`` or ``fake:echo``.
A provider is thin: one async ``generate``; everything else lives in :class:`~docket.llm.model.Model`.

Any name may end in parameters for that model only, parsed here and nowhere else:
``openai-compatible:http://h:8000/v1#llama?max_in_flight=64&timeout=30``. They tune how
docket calls the model, never what it answers, so they are not part of the canonical
name (nor of cache keys or stored judgments).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from docket.errors import ConfigError
from docket.llm.types import Completion, Request


@runtime_checkable
class Provider(Protocol):
    """A backend that answers one request at a time."""

    name: str
    """Canonical model name, part of every cache key and judgment record."""
    max_concurrency: int
    """Default calls in flight against this backend (the user's ``max_in_flight``)."""
    supports_json_schema: bool
    supports_logprobs: bool

    async def generate(self, request: Request) -> Completion:
        """Answer one request; raise TransientModelError for retryable failures."""
        ...


ProviderFactory = Callable[[str], Provider]
_FACTORIES: dict[str, ProviderFactory] = {}


def register_provider(prefix: str, factory: ProviderFactory) -> None:
    """Register ``factory`` for model names ``prefix`` or ``prefix:<rest>``."""
    _FACTORIES[prefix] = factory


@dataclass(frozen=True)
class ModelSpec:
    """A model name split into its canonical name and its call parameters.

    Attributes:
        name: the name without parameters, e.g. ``openai-compatible:http://h:8000/v1#llama``.
        max_in_flight: calls in flight to this model (None: the setting or provider default).
        timeout_s: seconds one HTTP request may take before it is retried (None: default).
    """

    name: str
    max_in_flight: int | None = None
    timeout_s: float | None = None


PARAMETERS = {"max_in_flight": int, "timeout": float}


def parse_model_name(text: str) -> ModelSpec:
    """Split ``name?key=value&...`` into a :class:`ModelSpec`; unknown keys are refused."""
    name, sep, query = text.partition("?")
    if not sep:
        return ModelSpec(text)
    values: dict[str, float] = {}
    for item in query.split("&"):
        key, eq, raw = item.partition("=")
        if key not in PARAMETERS or not eq:
            raise ConfigError(
                f"model '{text}': cannot read parameter '{item}'",
                hint="known parameters: max_in_flight=N, timeout=SECONDS, e.g. local?max_in_flight=1",
            )
        values[key] = _positive(text, key, raw)
    timeout = values.get("timeout")
    in_flight = values.get("max_in_flight")
    return ModelSpec(name, None if in_flight is None else int(in_flight), timeout)


def _positive(text: str, key: str, raw: str) -> float:
    try:
        value = PARAMETERS[key](raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ConfigError(
            f"model '{text}': {key}={raw!r} is not a positive number",
            hint=f"e.g. ?{key}={'64' if key == 'max_in_flight' else '120'}",
        )
    return value


def create_provider(model_name: str) -> Provider:
    """Build the provider for a model name such as ``openai:gpt-4o-mini`` or ``local``.

    Parameters after ``?`` are ignored here; :class:`~docket.llm.model.Model` applies them.
    """
    _ensure_builtin_providers()
    model_name = parse_model_name(model_name).name
    prefix, _, rest = model_name.partition(":")
    factory = _FACTORIES.get(prefix)
    if factory is None:
        known = ", ".join(sorted(_FACTORIES))
        raise ConfigError(
            f"unknown model '{model_name}'",
            hint=f"use one of the prefixes {known}, e.g. 'local' or 'openai:gpt-4o-mini'",
        )
    return factory(rest)


def _ensure_builtin_providers() -> None:
    # Imported lazily so that importing docket.llm never imports an SDK. Always import all
    # three (a no-op once loaded): checking for one missed the others when a caller had
    # imported docket.llm.fake directly.
    from docket.llm import fake, local, openai_compat  # noqa: F401
