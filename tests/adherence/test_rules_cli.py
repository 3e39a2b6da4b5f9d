"""``docket rules``: extract, stability, validate, schema, checkers, sop; user errors as one line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from docket.adherence.rules import load_rules, schema_text
from docket.cli.main import app, main
from docket.llm import Request
from docket.llm.fake import register_fake

ROOT = Path(__file__).resolve().parents[2]
SOP = ROOT / "examples" / "sop" / "dialogue_sop.md"
runner = CliRunner()


def _script(request: Request) -> str:
    prompt = request.messages[1].content
    if prompt.startswith("Rules kept so far:"):
        return '{"atomic": true, "overlaps": null}'
    if "1.2 Length" in prompt.splitlines()[0]:
        check = {"checker": "word_count", "params": {"max": 120}}
        return json.dumps({"text": "Each assistant turn has at most 120 words.", "tier": "fmt",
                           "scope": "role:assistant", "lines": [18, 18], "check": check})  # fmt: skip
    if "3.2 Tone" in prompt.splitlines()[0]:
        return json.dumps(
            {"text": "The assistant is polite.", "tier": "sub", "scope": "role:assistant"}
        )
    return "NONE"


MODEL = register_fake("rules-cli", _script)


def run_main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["docket", *args])
    with pytest.raises(SystemExit) as exit_info:
        main()
    return int(exit_info.value.code or 0)


def test_extract_writes_a_valid_rules_file_and_report(tmp_path: Path) -> None:
    output, report = tmp_path / "rules.yaml", tmp_path / "report.json"
    args = [
        "rules",
        "extract",
        str(SOP),
        "-o",
        str(output),
        "--model",
        MODEL,
        "--cache",
        "off",
        "--report",
        str(report),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    ruleset = load_rules(output)
    assert [(r.id, r.tier) for r in ruleset.rules] == [("R1", "fmt"), ("R2", "sub")]
    assert ruleset.rules[0].source.lines == (18, 18)
    assert ruleset.rules[0].source.section.endswith("1 Dialogue Structure > 1.2 Length")
    assert json.loads(report.read_text())["kept"] == 2
    assert "wrote 2 rules" in result.output


def test_stability_prints_the_variation(tmp_path: Path) -> None:
    json_out = tmp_path / "stability.json"
    args = [
        "rules",
        "stability",
        str(SOP),
        "--runs",
        "2",
        "--model",
        MODEL,
        "--cache",
        "off",
        "--json",
        str(json_out),
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "variation (1 - mean Jaccard): 0.0%" in result.output
    assert json.loads(json_out.read_text())["rule_counts"] == [2, 2]


def test_validate_the_example() -> None:
    result = runner.invoke(
        app, ["rules", "validate", str(ROOT / "examples" / "sop" / "rules.yaml")]
    )
    assert result.exit_code == 0, result.output
    assert "valid, 20 rules (fmt 8, sim 5, sub 7)" in result.output


def test_validate_json_includes_versions() -> None:
    result = runner.invoke(
        app, ["rules", "validate", "--json", str(ROOT / "examples" / "sop" / "rules.yaml")]
    )
    data = json.loads(result.output)
    assert data["version"] and all(rule["version"] for rule in data["rules"])


def test_schema_and_checkers(tmp_path: Path) -> None:
    assert runner.invoke(app, ["rules", "schema"]).output == schema_text()
    assert runner.invoke(app, ["rules", "schema", "-o", str(tmp_path / "s.json")]).exit_code == 0
    assert (tmp_path / "s.json").read_text() == schema_text()
    listing = runner.invoke(app, ["rules", "checkers"]).output
    assert "role_alternation" in listing and "json_schema" in listing


def test_sop_sections() -> None:
    result = runner.invoke(app, ["rules", "sop", str(SOP), "--sections"])
    assert "10-14" in result.output and "1.1 Turns" in result.output


def test_bad_rules_file_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "rules.yaml"
    bad.write_text(
        "name: s\nrules:\n  - {id: F1, text: t, tier: fmt, check: {checker: word_cnt, params: {}}}\n"
    )
    assert run_main(monkeypatch, "rules", "validate", str(bad)) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(
        f"error: {bad}:3: field 'rules[0] (id 'F1').check': unknown checker 'word_cnt'"
    )


def test_empty_sop_is_one_line_and_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "sop.md"
    empty.write_text("")
    code = run_main(
        monkeypatch,
        "rules",
        "extract",
        str(empty),
        "-o",
        str(tmp_path / "r.yaml"),
        "--model",
        MODEL,
    )
    assert code == 2
    assert "the SOP file is empty" in capsys.readouterr().err
    assert not (tmp_path / "r.yaml").exists()


ASKED: list[Request] = []


def _echo(request: Request) -> str:
    ASKED.append(request)
    return request.messages[0].content  # a weak model copying its prompt: nothing parses


ECHO = register_fake("rules-cli-echo", _echo)


def test_extract_with_zero_rules_is_an_error_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    output = tmp_path / "rules.yaml"
    ASKED.clear()
    args = ["rules", "extract", str(SOP), "-o", str(output), "--model", ECHO, "--cache", "off"]
    code = run_main(monkeypatch, *args, "--max-tokens", "200")
    assert code == 2 and not output.exists()
    err = capsys.readouterr().err
    error = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(error) == 1 and "no rule extracted from" in error[0] and str(SOP) in error[0]
    assert "Traceback" not in err
    # generation is bounded by --max-tokens on every call
    assert ASKED and {r.max_tokens for r in ASKED} == {200}


def test_extract_shows_progress_when_not_on_a_terminal(tmp_path: Path) -> None:
    output = tmp_path / "rules.yaml"
    args = ["rules", "extract", str(SOP), "-o", str(output), "--model", MODEL, "--cache", "off"]
    result = runner.invoke(app, args)  # CliRunner output is not a TTY
    assert result.exit_code == 0, result.output
    sections = len([s for s in load_sop_sections() if s.text.strip()])
    assert f"extract: section {sections}/{sections} proposed" in result.output
    assert "extract: placing candidate 2/2" in result.output


def load_sop_sections():  # type: ignore[no-untyped-def]
    from docket.adherence.authoring.sop import load_sop

    return load_sop(SOP).sections
