"""The provider protocol and the registry that turns model names into providers.

Model names look like ``openai:gpt-4o-mini``,
``openai-compatible:http://host:8000/v1#llama-3.3-70b``, ``local`` or ``fake:echo``.
A provider is thin: one async ``generate``; everything else lives in :class:`~docket.llm.model.Model`.

Providers are found by the prefix before ``:``, through the entry-point group
``docket.providers`` (``prefix = "module:factory"``), the built-in ones too (declared in
docket's ``pyproject.toml``). A plugin package declares its own and ``Model("myprov:...")``
finds it, docket unedited. An entry point is loaded when its prefix is first asked for, so
importing docket.llm imports no SDK; :func:`register_provider` adds one at run time
(tests, notebooks).

Any name may end in parameters for that model only, parsed here and nowhere else:
``openai-compatible:http://h:8000/v1#llama?max_in_flight=64&timeout=30``. They tune how
docket calls the model, never what it answers, so they are not part of the canonical
name (nor of cache keys or stored judgments).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import import_module
from importlib.metadata import entry_points
from typing import Protocol, runtime_checkable

from docket.errors import ConfigError
from docket.llm.types import Completion, Message, Request


@runtime_checkable
class Provider(Protocol):
    """A backend that answers one request at a time."""

    name: str
    """Canonical model name, part of every cache key and judgment record."""
    max_concurrency: int
    """Default calls in flight against this backend (the user's ``max_in_flight``)."""
    supports_json_schema: bool
    supports_logprobs: bool

    timeout_s: float | None
    """Seconds one request may take; None: the provider takes no timeout (``?timeout=``
    is then not applied)."""
    base_url: str | None
    """The HTTP server behind the provider, if any (its ``/tokenize`` may count tokens)."""
    model: str
    """The model id sent to that server ("" when there is none)."""
    can_probe: bool
    """True when :meth:`probe` asks a server what it serves (the in-flight limit it
    learns is then remembered for the model)."""
    has_tokenizer: bool
    """True when :meth:`count_prompt_tokens` counts exactly."""

    async def generate(self, request: Request) -> Completion:
        """Answer one request; raise TransientModelError for retryable failures."""
        ...

    async def probe(self) -> int | None:
        """Ask the server what it serves before the first call: its slots, or None."""
        ...

    def count_prompt_tokens(self, messages: Sequence[Message]) -> int:
        """Prompt tokens of ``messages`` (only when ``has_tokenizer``)."""
        ...


class ProviderDefaults:
    """The optional :class:`Provider` members, for providers that lack an ability.

    docket's providers inherit it; a plugin's provider that does not is wrapped once in a
    :class:`ProviderAdapter` by :func:`complete_provider`.
    """

    timeout_s: float | None = None
    base_url: str | None = None
    model: str = ""
    can_probe: bool = False
    has_tokenizer: bool = False

    async def probe(self) -> int | None:
        """Nothing to ask: no server behind this provider."""
        return None

    def count_prompt_tokens(self, messages: Sequence[Message]) -> int:
        """Not available (``has_tokenizer`` is False)."""
        raise NotImplementedError(f"{type(self).__name__} has no tokenizer")


OPTIONAL_MEMBERS = ("timeout_s", "base_url", "model", "can_probe", "has_tokenizer", "probe",
                    "count_prompt_tokens")  # fmt: skip


class ProviderAdapter(ProviderDefaults):
    """A plugin's provider with the optional members it lacks filled in.

    Members the plugin does have are its own (read and written through to it); a plugin
    with ``probe`` or ``count_prompt_tokens`` keeps those abilities.
    """

    def __init__(self, inner: object) -> None:
        object.__setattr__(self, "inner", inner)
        if hasattr(inner, "probe"):
            object.__setattr__(self, "can_probe", True)
        if hasattr(inner, "count_prompt_tokens"):
            object.__setattr__(self, "has_tokenizer", True)

    def __getattribute__(self, name: str) -> object:
        inner = object.__getattribute__(self, "inner")
        if name != "inner" and hasattr(inner, name):
            return getattr(inner, name)
        return object.__getattribute__(self, name)

    def __setattr__(self, name: str, value: object) -> None:
        setattr(object.__getattribute__(self, "inner"), name, value)


def complete_provider(provider: object) -> Provider:
    """``provider`` itself if it declares every :class:`Provider` member, else wrapped once
    in a :class:`ProviderAdapter` (plugins written before those members existed)."""
    if isinstance(provider, ProviderDefaults) or all(
        hasattr(provider, name) for name in OPTIONAL_MEMBERS
    ):
        return provider  # type: ignore[return-value]
    return ProviderAdapter(provider)


ProviderFactory = Callable[[str], Provider]
ENTRY_POINT_GROUP = "docket.providers"
BUILTIN_PROVIDERS = {
    "fake": "docket.llm.fake:create_fake",
    "local": "docket.llm.local:create_local",
    "openai": "docket.llm.openai_compat:create_openai",
    "openai-compatible": "docket.llm.openai_compat:create_compatible",
}
"""docket's own entry points, as ``pyproject.toml`` declares them (a test keeps the two
equal): used as they are when docket runs from a source tree that was never installed,
whose metadata holds no entry points."""
_FACTORIES: dict[str, ProviderFactory] = {}
_SPECS: dict[str, str] | None = None


def register_provider(prefix: str, factory: ProviderFactory) -> None:
    """Register ``factory`` for model names ``prefix`` or ``prefix:<rest>`` at run time."""
    _FACTORIES[prefix] = factory


def provider_specs() -> dict[str, str]:
    """Every provider prefix known from entry points, as ``{prefix: "module:factory"}``."""
    global _SPECS
    if _SPECS is None:
        found = {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
        _SPECS = {**BUILTIN_PROVIDERS, **found}
    return _SPECS


def provider_prefixes() -> set[str]:
    """Every model-name prefix a provider answers to: entry points and run-time registrations."""
    return {*provider_specs(), *_FACTORIES}


def _factory(prefix: str) -> ProviderFactory | None:
    if prefix in _FACTORIES:
        return _FACTORIES[prefix]
    spec = provider_specs().get(prefix)
    if spec is None:
        return None
    module_name, _, attribute = spec.partition(":")
    try:
        factory = getattr(import_module(module_name), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"model provider '{prefix}' ({spec}) cannot be loaded: {exc}",
            hint="reinstall the package that provides it",
        ) from exc
    _FACTORIES[prefix] = factory
    return factory


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
    model_name = parse_model_name(model_name).name
    prefix, _, rest = model_name.partition(":")
    factory = _factory(prefix)
    if factory is None:
        known = ", ".join(sorted({*provider_specs(), *_FACTORIES}))
        raise ConfigError(
            f"unknown model '{model_name}'",
            hint=f"use one of the prefixes {known}, e.g. 'local' or 'openai:gpt-4o-mini'",
        )
    return complete_provider(factory(rest))
