"""Per-model prices for plans and cost caps: ``[docket.prices]`` in docket.toml, flags, defaults.

``docket.toml``::

    [docket.prices."openai:gpt-4o-mini"]
    input = 0.15          # USD per million fresh input tokens
    cached_input = 0.075  # USD per million input tokens served from a prefix cache
    output = 0.60         # USD per million output tokens

Flags (``--price-input`` ...) price the job's main model and win over the file; the file
wins over the small dated table in :mod:`docket.llm.usage`. ``local`` and unknown served
models cost 0, with a note saying so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from docket.config import CONFIG_FILE, docket_table
from docket.errors import ConfigError
from docket.llm.provider import parse_model_name, provider_prefixes
from docket.llm.usage import DEFAULT_PRICES, PRICES_DATE, Price

FIELDS = ("input", "cached_input", "output")
UNKNOWN = "no price known for this model: cost 0 (give --price-input/--price-output)"


@dataclass(frozen=True)
class PriceQuote:
    """The price a plan uses for one model, and where it came from (for the note)."""

    model: str
    price: Price
    source: str
    known: bool = True
    """False when no price is known for a served model (it is then priced at 0)."""

    def to_json(self) -> dict[str, Any]:
        """Plain dict for ``--json``."""
        return {"model": self.model, "source": self.source, "known": self.known,
                **vars(self.price)}  # fmt: skip


def load_price_table(path: Path | None = None) -> dict[str, Price]:
    """The ``[docket.prices]`` table of ``path`` (default ./docket.toml); {} if none.

    Raises:
        ConfigError: a malformed table (names the file, model and field), or a model name
            with no known provider prefix.
    """
    path = path or Path(CONFIG_FILE)
    table = docket_table(path).get("prices", {})
    if not isinstance(table, Mapping):
        raise ConfigError(f"{path}: [docket.prices] must be a table of models")
    return {name: _price(f"{path}: docket.prices.{name}", name, row) for name, row in table.items()}


def _price(where: str, model: str, row: Any) -> Price:
    check_known_model(model, where)
    if not isinstance(row, Mapping):
        raise ConfigError(f"{where}: must be a table with {', '.join(FIELDS)}")
    unknown = sorted(set(row) - set(FIELDS))
    if unknown:
        raise ConfigError(f"{where}.{unknown[0]}: unknown field", hint=f"use {', '.join(FIELDS)}")
    for name in ("input", "output"):
        if name not in row:
            raise ConfigError(f"{where}.{name}: missing", hint="USD per million tokens, e.g. 0.15")
    values = {name: check_price(f"{where}.{name}", row[name]) for name in FIELDS if name in row}
    values.setdefault("cached_input", values["input"])
    return Price(**values)


def check_price(where: str, value: Any) -> float:
    """A price as a float; refuses what is not a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where}: {value!r} is not a number", hint="USD per million tokens")
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"{where}: {value!r} must be a finite number >= 0")
    return float(value)


def check_known_model(model: str, where: str) -> None:
    """Refuse a price for a model name no provider answers to (a typo would price nothing)."""
    prefix = parse_model_name(model).name.partition(":")[0]
    known = provider_prefixes()
    if prefix not in known:
        raise ConfigError(
            f"{where}: unknown model '{model}'",
            hint=f"name it as docket does, with one of the prefixes {', '.join(sorted(known))}",
        )


def quote(
    model: str,
    table: Mapping[str, Price] | None = None,
    flags: Mapping[str, float | None] | None = None,
) -> PriceQuote:
    """The price of ``model``: flags, then the table, then the dated defaults, else 0.

    ``flags`` maps ``input``/``cached_input``/``output`` to a value or None (not given);
    given flags need at least ``input`` and ``output`` unless the model has a price already.
    """
    table = table or {}
    name = parse_model_name(model).name
    base, source = _base(name, table)
    given = {k: v for k, v in (flags or {}).items() if v is not None}
    if not given:
        return PriceQuote(name, base or Price(0.0, 0.0, 0.0), source, known=source != UNKNOWN)
    if base is None and not {"input", "output"} <= set(given):
        raise ConfigError(
            f"--price-input and --price-output are both needed to price '{name}'",
            hint="USD per million tokens, e.g. --price-input 0.15 --price-output 0.6",
        )
    values = {k: check_price(f"--price-{k.replace('_', '-')}", v) for k, v in given.items()}
    merged = {**vars(base or Price(0, 0, 0)), **values}
    if "cached_input" not in given and base is None:
        merged["cached_input"] = merged["input"]
    return PriceQuote(name, Price(**merged), "flags")


def _base(name: str, table: Mapping[str, Price]) -> tuple[Price | None, str]:
    if name in table:
        return table[name], "docket.toml [docket.prices]"
    if name in DEFAULT_PRICES:
        return DEFAULT_PRICES[name], f"docket's default table of {PRICES_DATE}"
    if name == "local" or name.startswith("local:") or name.startswith("fake:"):
        return None, "local model: no cost"
    return None, UNKNOWN
