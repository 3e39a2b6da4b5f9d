"""``docket bench readeval build|run`` through the CLI: tables, files, user errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.cli.main import app, main
from docket.errors import ConfigError, InputError
from tests.adherence.bench_helpers import (
    SOP,
    clean_seeds,
    fake_model,
    generator,
    judge_reply,
    write_seeds,
)

runner = CliRunner()
RULES = str(SOP / "rules.yaml")


@pytest.fixture
def seeds(tmp_path: Path) -> Path:
    return write_seeds(tmp_path / "seeds.jsonl", clean_seeds())


def build_args(seeds: Path, out: Path, *extra: str) -> list[str]:
    return [
        "bench",
        "readeval",
        "build",
        "-r",
        RULES,
        "--seeds",
        str(seeds),
        "-o",
        str(out),
        "--cache",
        "off",
        *extra,
    ]


def test_build_then_run_fmt_only(seeds: Path, tmp_path: Path) -> None:
    data = tmp_path / "ds.jsonl"
    built = runner.invoke(app, build_args(seeds, data, "--samples", "15", "--seed", "2"))
    assert built.exit_code == 0, built.output
    assert "15 samples kept" in built.output and "wrote 15 samples" in built.output
    lines = data.read_text().splitlines()
    assert len(lines) == 16 and json.loads(lines[0])["config"]["seed"] == 2
    report = tmp_path / "r.json"
    ran = runner.invoke(
        app,
        [
            "bench",
            "readeval",
            "run",
            "-d",
            str(data),
            "-r",
            RULES,
            "--tiers",
            "fmt",
            "--out",
            str(report),
        ],
    )
    assert ran.exit_code == 0, ran.output
    assert "modes compared" in ran.output and "0.749" in ran.output
    payload = json.loads(report.read_text())
    overall = payload["modes"]["atomic"]["needs_review_as_flag"]["overall"]
    assert (overall["tp"], overall["fp"], overall["fn"]) == (15, 0, 0)
    assert payload["reference"]["paper_f1"] == 0.749


def test_build_with_generator_and_judge_and_persona_option(seeds: Path, tmp_path: Path) -> None:
    fake_model("cli-gen", generator())
    fake_model("cli-judge", judge_reply)
    data = tmp_path / "ds.jsonl"
    args = build_args(
        seeds,
        data,
        "--samples",
        "10",
        "--generator-model",
        "fake:cli-gen",
        "--judge-model",
        "fake:cli-judge",
        "--persona",
        "novice=0.05,0.3,0.5",
    )
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    header = json.loads(data.read_text().splitlines()[0])
    assert header["models"]["generator"] == "fake:cli-gen"
    assert [p["name"] for p in header["config"]["personas"]] == ["novice"]
    assert header["judge_checked"] is True


def test_malformed_seed_file_names_the_line_and_writes_nothing(seeds: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(seeds.read_text() + '{"id": "x", "turns": [{"role": "user"}]}\n')
    data = tmp_path / "ds.jsonl"
    result = runner.invoke(app, build_args(bad, data))
    assert isinstance(result.exception, InputError)
    assert "bad.jsonl:4" in str(result.exception) and "turns.0.text" in str(result.exception)
    assert not data.exists() and list(tmp_path.glob(".ds.jsonl*")) == []


def test_malformed_rules_file_names_the_line(seeds: Path, tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(
        "name: x\nrules:\n- id: R1\n  text: t\n  tier: fmt\n  check: {checker: word_count, params: {max: -1}}\n"
    )
    data = tmp_path / "ds.jsonl"
    args = build_args(seeds, data)
    args[args.index(RULES)] = str(rules)
    result = runner.invoke(app, args)
    assert isinstance(result.exception, InputError)
    assert "rules.yaml:3" in str(result.exception) and not data.exists()


def test_bad_options_are_config_errors(seeds: Path, tmp_path: Path) -> None:
    data = tmp_path / "ds.jsonl"
    for extra, message in (
        (["--persona", "novice=1,2"], "NAME=FMT,SIM,SUB"),
        (["--tiers", "fmt,xyz"], "unknown tier"),
        (["--tiers", "sim"], "generator"),
    ):
        result = runner.invoke(app, build_args(seeds, data, *extra))
        assert isinstance(result.exception, ConfigError), extra
        assert message in str(result.exception)
    assert not data.exists()


def test_run_on_a_file_that_is_not_a_dataset_is_one_line_and_exit_2(
    seeds: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        sys, "argv", ["docket", "bench", "readeval", "run", "-d", str(seeds), "-r", RULES]
    )
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "seeds.jsonl:1" in err and "not a RE-AD-Eval header" in err and "Traceback" not in err


def test_unknown_mode_is_refused(seeds: Path, tmp_path: Path) -> None:
    data = tmp_path / "ds.jsonl"
    assert runner.invoke(app, build_args(seeds, data, "--samples", "2")).exit_code == 0
    result = runner.invoke(
        app, ["bench", "readeval", "run", "-d", str(data), "-r", RULES, "--mode", "both"]
    )
    assert isinstance(result.exception, ConfigError)


def test_run_compares_atomic_and_holistic(seeds: Path, tmp_path: Path) -> None:
    data, report = tmp_path / "ds.jsonl", tmp_path / "r.json"
    assert runner.invoke(app, build_args(seeds, data, "--samples", "6")).exit_code == 0
    fake_model("cli-verifier", judge_reply)
    fake_model("cli-holistic", lambda request: "nothing useful")
    args = [
        "bench",
        "readeval",
        "run",
        "-d",
        str(data),
        "-r",
        RULES,
        "--sim-model",
        "fake:cli-verifier",
    ]
    args += ["--sub-model", "fake:cli-holistic", "--mode", "atomic", "--mode", "holistic"]
    result = runner.invoke(app, [*args, "--cache", "off", "--out", str(report)])
    assert result.exit_code == 0, result.output
    modes = json.loads(report.read_text())["modes"]
    assert list(modes) == ["atomic", "holistic"]
    # an unreadable holistic reply leaves every rule undecided: a flag or a pass, never silent
    holistic = modes["holistic"]
    assert holistic["needs_review"]["results"] == 6 * 20
    assert holistic["needs_review_as_pass"]["overall"]["tp"] == 0
    assert holistic["needs_review_as_flag"]["overall"]["recall"] == 1.0
    # atomic: sub rules are undecided too (unreadable), fmt samples are found by code
    atomic = modes["atomic"]
    assert atomic["needs_review_as_pass"]["by_tier"]["fmt"]["f1"] == 1.0
    assert atomic["needs_review"]["results"] == 6 * 7
