"""Every judging command takes the same judge, model and job flags, and records the same
canonical model name, so a rerun that changes only a call parameter resumes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import click
import pytest
import typer
from typer.testing import CliRunner

from docket.cli.judging_flags import GROUPS, RUNNING
from docket.cli.main import app
from docket.store import open_store
from docket.store.tables import Job
from tests.ir.conftest import make_bench
from tests.scripted_server import serve, user_text

COMMANDS = (["judge"], ["holes", "fill"], ["holes", "simulate"], ["eval", "methods"])
FLAGS = [f for group in RUNNING for f in GROUPS[group]]
"""The flags of every command that judges (``docket judge`` takes the plan and pilot too)."""
runner = CliRunner()


def _command(path: list[str]) -> click.Command:
    command: click.Command = typer.main.get_command(app)
    for name in path:
        command = command.get_command(None, name)  # type: ignore[attr-defined]
    return command


def _shared_options(path: list[str]) -> dict[str, tuple]:
    names = {f.name for f in FLAGS}
    return {
        p.name: (
            tuple(p.opts),
            str(p.type_descriptor.annotation),
            p.default,
            p.multiple,
            p.help,
            p.rich_help_panel,
        )
        for p in _command(path).params
        if p.name in names
    }


def test_the_four_judging_commands_take_the_same_shared_flags() -> None:
    first = _shared_options(list(COMMANDS[1]))
    assert set(first) == {f.name for f in FLAGS}
    assert first["agent_model"][0] == ("--agent-model",) and first["agent_model"][3]  # repeatable
    for path in COMMANDS:
        assert _shared_options(list(path)) == first, path


@pytest.mark.parametrize("path", COMMANDS)
def test_help_lists_every_shared_flag(path: list[str]) -> None:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for flag in FLAGS:
        assert f"--{flag.name.replace('_', '-')}" in result.output


def _relevant(body: dict) -> str:
    agent = re.search(r"you are agent (\w)", user_text(body))
    label = (
        "relevant"
        if agent is None or agent.group(1) == "A" or "Zebra" in user_text(body)
        else "irrelevant"
    )
    return json.dumps({"label": label, "evidence": ["S1"], "reasoning": "scripted"})


def test_a_holes_fill_rerun_that_changes_only_max_in_flight_resumes_with_no_call(tmp_path: Path):
    bench = make_bench(tmp_path)
    with serve(_relevant) as server:

        def fill(params: str) -> str:
            args = ["holes", "fill", "--qrels", bench.qrels, "--runs", *bench.runs, "--depth", 3,
                    "--corpus", bench.corpus, "--corpus-index", bench.index,
                    "--queries", bench.queries, "--model", server.model("m", params),
                    "--cache", "off", "--db", tmp_path / "d.db", "--job", "h",
                    "--out-qrels", tmp_path / "c.qrels", "--provenance", tmp_path / "p.jsonl"]  # fmt: skip
            result = runner.invoke(app, [str(a) for a in args])
            assert result.exit_code == 0, result.output
            return result.output

        fill("max_in_flight=4")
        calls = len(server.requests)
        assert calls > 0
        again = fill("max_in_flight=2")
        assert len(server.requests) == calls and "judged 0 pairs now" in again
    with open_store(tmp_path / "d.db").session() as session:
        assert session.get(Job, "h").model == server.model("m")  # canonical: no parameters
