"""Each judging command takes the option groups it reads, and reads every option it lists."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

from docket.cli import judging_flags
from docket.cli.judging_flags import GROUPS, JudgingFlags
from docket.cli.main import app
from docket.llm.fake import register_fake
from tests.ir.conftest import make_bench
from tests.jobs.fakes import EXAMPLES

runner = CliRunner()
SHARED = {f.name for flags in GROUPS.values() for f in flags}


def _command(path: list[str]) -> click.Command:
    command: click.Command = typer.main.get_command(app)
    for name in path:
        command = command.get_command(None, name)  # type: ignore[attr-defined]
    return command


def _listed(path: list[str]) -> set[str]:
    return {p.name for p in _command(path).params if p.name in SHARED}


def _flags_of(*groups: str) -> set[str]:
    return {f.name for g in groups for f in GROUPS[g]}


def test_docket_plan_lists_no_executor_cap_pilot_or_exit_option() -> None:
    listed = _listed(["plan"])
    assert listed == _flags_of("model", "judge", "job", "price", "plan")
    result = runner.invoke(app, ["plan", "--help"], env={"COLUMNS": "200"})
    for flag in ("--executor", "--ray-workers", "--max-cost", "--max-escalations", "--pilot",
                 "--min-kappa", "--allow-failed", "--plan "):  # fmt: skip
        assert flag not in result.output, flag


def test_docket_plan_refuses_an_executor_in_the_parser(tmp_path: Path) -> None:
    result = runner.invoke(app, ["plan", str(EXAMPLES), "--model", "fake:echo", "--db",
                                 str(tmp_path / "d.db"), "--executor", "ray"])  # fmt: skip
    assert result.exit_code == 2 and "No such option" in result.output
    assert not (tmp_path / "d.db").exists()


def test_a_pilot_gate_without_a_pilot_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "docket", "judge", str(EXAMPLES), "--model",
         "fake:echo", "--db", str(tmp_path / "d.db"), "--min-kappa", "0.5"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "error: --min-kappa gates a pilot: it needs --pilot N (e.g. --pilot 20)"
    ]
    assert not (tmp_path / "d.db").exists()


class Recorder(dict):  # type: ignore[type-arg]
    """The flag values a command received, noting each one the command asked for."""

    read: set[str] = set()

    def get(self, key, default=None):  # type: ignore[no-untyped-def, override]
        Recorder.read.add(key)
        return super().get(key, default)


@pytest.fixture
def recorded(monkeypatch):  # type: ignore[no-untyped-def]
    Recorder.read = set()
    original = JudgingFlags.__init__

    def init(self, values):  # type: ignore[no-untyped-def]
        original(self, Recorder(values))

    monkeypatch.setattr(judging_flags.JudgingFlags, "__init__", init)
    return Recorder


def _agree(_request):  # type: ignore[no-untyped-def]
    return json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "on topic"})


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    bench = make_bench(tmp_path)
    model = register_fake("flag-groups", _agree)
    base = ["--model", model, "--db", str(tmp_path / "d.db"), "--cache", "off"]
    ir = ["--qrels", str(bench.qrels), "--runs", *map(str, bench.runs),
          "--corpus", str(bench.corpus), "--corpus-index", str(bench.index),
          "--queries", str(bench.queries)]  # fmt: skip
    return {
        "plan": ["plan", str(EXAMPLES), *base],
        "judge": ["judge", str(EXAMPLES), *base],
        "holes fill": [
            "holes",
            "fill",
            *ir,
            "--depth",
            "3",
            "--out-qrels",
            str(tmp_path / "c.qrels"),
            "--provenance",
            str(tmp_path / "p.jsonl"),
            *base,
        ],  # fmt: skip
        "holes simulate": ["holes", "simulate", *ir, *base],
        "eval methods": [
            "eval",
            "methods",
            str(EXAMPLES),
            "--methods",
            "single,majority",
            *base,
        ],  # fmt: skip
    }


def test_every_judging_command_reads_each_option_it_lists(tmp_path: Path, recorded) -> None:
    for name, args in _commands(tmp_path).items():
        recorded.read = set()
        result = runner.invoke(app, args, env={"COLUMNS": "200"})
        assert result.exit_code == 0, (name, result.output, result.exception)
        listed = _listed(name.split())
        assert listed, name
        assert listed <= recorded.read, (name, sorted(listed - recorded.read))


def test_a_command_takes_only_known_groups() -> None:
    with pytest.raises(ValueError, match="unknown option groups"):
        judging_flags.judging_command("model", "budget")


def test_flag_types_defaults_and_help_come_from_the_settings() -> None:
    from docket.config import Settings

    param = next(p for p in _command(["judge"]).params if p.name == "timeout")
    assert Settings.model_fields["timeout"].description in (param.help or "")
    assert param.default is None  # not given: docket.toml, the environment, the default
    lara = next(p for p in _command(["judge"]).params if p.name == "lara_budget")
    assert lara.opts == ["--lara-budget"] and "lara: share of pairs sent to humans" in lara.help
