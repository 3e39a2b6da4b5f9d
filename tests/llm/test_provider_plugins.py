"""Providers register through the ``docket.providers`` entry-point group, docket's own too."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from docket.errors import ConfigError
from docket.llm import Message, Model, Request, provider
from docket.llm.provider import (
    BUILTIN_PROVIDERS,
    ProviderAdapter,
    complete_provider,
    create_provider,
)
from docket.llm.types import Completion

ROOT = Path(__file__).resolve().parents[2]

PLUGIN = """
from dataclasses import dataclass
from docket.llm.types import Completion, Request


@dataclass
class Shout:
    name: str
    max_concurrency: int = 2
    supports_json_schema: bool = False
    supports_logprobs: bool = False

    async def generate(self, request: Request) -> Completion:
        return Completion(text=request.messages[-1].content.upper(), prompt_tokens=1)


def create(rest: str) -> Shout:
    return Shout(name=f"shout:{rest}")
"""

USE = """
import json, sys
from docket.llm import Message, Model, Request
model = Model("shout:loud?max_in_flight=3")
reply = model.generate_sync(Request(messages=(Message("user", "hello"),)))
print(json.dumps([model.name, reply.text, model.max_concurrency,
                  "docket.llm.openai_compat" in sys.modules]))
"""


def _install_plugin(site: Path) -> None:
    """A package as pip leaves it: the module and a dist-info with entry_points.txt."""
    (site / "shout_provider.py").write_text(PLUGIN)
    info = site / "shout_provider-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: shout-provider\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[docket.providers]\nshout = shout_provider:create\n")


def test_a_plugin_on_the_path_is_found_by_its_entry_point(tmp_path: Path) -> None:
    _install_plugin(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", USE],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": f"{tmp_path}:{ROOT / 'src'}", "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    name, text, in_flight, loaded_sdk = json.loads(done.stdout.strip().splitlines()[-1])
    assert (name, text, in_flight) == ("shout:loud", "HELLO", 3)
    assert not loaded_sdk  # only the provider asked for is imported


def test_the_builtin_providers_are_declared_as_entry_points_in_pyproject() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert declared["docket.providers"] == BUILTIN_PROVIDERS


def test_a_plugin_that_cannot_be_imported_is_one_config_error(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(provider, "_SPECS", {**BUILTIN_PROVIDERS, "gone": "no_such_mod:create"})
    with pytest.raises(ConfigError, match=r"provider 'gone' \(no_such_mod:create\) cannot be"):
        create_provider("gone:x")


def test_an_unknown_prefix_lists_every_known_one(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(provider, "_SPECS", {**BUILTIN_PROVIDERS, "shout": "shout_provider:create"})
    with pytest.raises(ConfigError) as info:
        create_provider("nosuch:model")
    assert "fake, local, openai, openai-compatible, shout" in info.value.hint


class _Bare:
    """A plugin provider written before the optional members were declared."""

    name, max_concurrency = "bare:x", 2
    supports_json_schema = supports_logprobs = False

    async def generate(self, request):  # type: ignore[no-untyped-def]
        return Completion(text="ok")


class _Served(_Bare):
    timeout_s = 5.0

    async def probe(self) -> int | None:
        return 1


def test_a_plugin_without_the_optional_members_gets_their_defaults_once() -> None:
    model = Model(_Bare())
    assert isinstance(model.provider, ProviderAdapter)
    assert (model.provider.timeout_s, model.provider.base_url, model.provider.model) == (
        None,
        None,
        "",
    )
    assert not model.provider.can_probe and not model.provider.has_tokenizer
    assert model.generate_sync(Request(messages=(Message("user", "hi"),))).text == "ok"
    assert complete_provider(create_provider("fake:echo")).__class__.__name__ == "FakeProvider"


def test_a_plugin_keeps_the_abilities_it_has() -> None:
    model = Model(_Served(), request_timeout_s=9.0)
    assert model.provider.can_probe and model.provider.timeout_s == 9.0
    model.generate_sync(Request(messages=(Message("user", "hi"),)))
    assert model.limit.current == 1  # the probe's one slot was applied
