"""The provider protocol and the registry that turns model names into providers.

Model names look like ``openai:gpt-4o-mini``,
``openai-compatible:http://host:8000/v1#llama-3.3-70b``, ``local`` or ``fake:echo``.
A provider is thin: one async ``generate``; everything else lives in :class:`~docket.llm.model.Model`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from docket.errors import ConfigError
from docket.llm.types import Completion, Request


@runtime_checkable
class Provider(Protocol):
    """A backend that answers one request at a time."""

    name: str
    """Canonical model name, part of every cache key and judgment record."""
    max_concurrency: int
    """How many calls may run at once against this backend."""
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


def create_provider(model_name: str) -> Provider:
    """Build the provider for a model name such as ``openai:gpt-4o-mini`` or ``local``."""
    _ensure_builtin_providers()
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
