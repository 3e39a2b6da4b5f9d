"""``docket verify``: batch run with summary, saving runs, stats, tokens, user errors."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from docket.adherence.models import VerificationResult
from docket.adherence.verify.history import record_feedback
from docket.adherence.web.tokens import VerifyTokens
from docket.cli.main import app, main
from docket.llm.fake import register_fake
from docket.store.base import open_store
from docket.web import sha256
from tests.adherence.verify_helpers import RULES, asked_rule

runner = CliRunner()


def sim_reply(request) -> str:  # type: ignore[no-untyped-def]
    data = request.messages[-1].content.split("Rule to check:")[0]
    return (
        "FAIL: says bot\nQUOTE: bot"
        if "I am a bot" in data and asked_rule(request) == "S1"
        else "PASS"
    )


SIM = register_fake("cli-sim", sim_reply)
SUB = register_fake("cli-sub", lambda r: "REASONING: ok\nVERDICT: PASS")
MODELS = ["--sim-model", SIM, "--sub-model", SUB, "--cache", "off"]


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(RULES, sort_keys=False), encoding="utf-8")
    data = tmp_path / "data.jsonl"
    records = [
        {
            "id": "ok",
            "turns": [
                {"role": "user", "text": "I need a ticket"},
                {"role": "assistant", "text": "Sure, where to?"},
            ],
        },
        {
            "id": "bad",
            "turns": [
                {"role": "user", "text": "Hi there, see www.x.com"},
                {"role": "assistant", "text": "I am a bot."},
            ],
        },
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return rules, data


def test_verify_without_subcommand_runs_the_batch(files: tuple[Path, Path], tmp_path: Path) -> None:
    rules, data = files
    out = tmp_path / "verdicts.jsonl"
    result = runner.invoke(
        app, ["verify", "--rules", str(rules), str(data), *MODELS, "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "2 records against test-dialogue" in result.output
    assert "by tier" in result.output
    verdicts = [json.loads(line) for line in out.read_text().splitlines()]
    assert [v["record_id"] for v in verdicts] == ["ok", "bad"]
    assert [v["status"] for v in verdicts] == ["pass", "fail"]
    bad = {r["rule_id"]: r["status"] for r in verdicts[1]["results"]}
    assert (bad["F2"], bad["S1"], bad["U1"]) == ("fail", "fail", "pass")


def test_run_saves_to_the_store_and_stats_report_the_accepted_rate(
    files: tuple[Path, Path], db_url: str
) -> None:
    rules, data = files
    result = runner.invoke(
        app, ["verify", "run", "--rules", str(rules), str(data), *MODELS, "--db", db_url]
    )
    assert result.exit_code == 0, result.output
    store = open_store(db_url)
    with store.session() as session:
        flags = session.query(VerificationResult).filter(VerificationResult.status == "fail").all()
        flag_ids = {row.rule_id: row.id for row in flags}
    assert set(flag_ids) == {"F2", "S1"}
    record_feedback(store, flag_ids["F2"], "accepted", "ann", fixed_text="Hi there")
    record_feedback(store, flag_ids["S1"], "dismissed", "ann", reason="quoting the user")
    store.close()
    stats = runner.invoke(app, ["verify", "stats", "--db", db_url, "--json"])
    assert stats.exit_code == 0, stats.output
    payload = json.loads(stats.output)
    tiers = {row["tier"]: row for row in payload["by_tier"]}
    assert (tiers["fmt"]["accepted_rate"], tiers["sim"]["accepted_rate"]) == (1.0, 0.0)
    table = runner.invoke(app, ["verify", "stats", "--db", db_url])
    assert "100%" in table.output and "F2" in table.output


def test_holistic_mode_from_the_cli(files: tuple[Path, Path]) -> None:
    rules, data = files
    holo = register_fake(
        "cli-holo", lambda r: "\n".join(f"[{rule['id']}] PASS" for rule in RULES["rules"])
    )
    result = runner.invoke(
        app,
        [
            "verify",
            "--rules",
            str(rules),
            str(data),
            "--sub-model",
            holo,
            "--mode",
            "holistic",
            "--cache",
            "off",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "holistic" in result.output


def test_token_add_prints_a_working_token(db_url: str) -> None:
    result = runner.invoke(app, ["verify", "token", "add", "ann", "--db", db_url])
    assert result.exit_code == 0, result.output
    token = result.output.strip()
    store = open_store(db_url)
    with store.session() as session:
        assert VerifyTokens().owner(session, sha256(token)).name == "ann"
    assert runner.invoke(app, ["verify", "token", "revoke", "ann", "--db", db_url]).exit_code == 0
    with store.session() as session:
        assert VerifyTokens().owner(session, sha256(token)) is None
    store.close()


def run_main(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["docket", *args])
    with pytest.raises(SystemExit) as exit_info:
        main()
    return int(exit_info.value.code or 0)


def test_unknown_checker_is_one_line_and_exit_2(
    files: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, data = files
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        yaml.safe_dump(
            {
                "name": "x",
                "rules": [
                    {
                        "id": "R1",
                        "text": "t",
                        "tier": "fmt",
                        "check": {"checker": "no_such_checker", "params": {}},
                    }
                ],
            }
        )
    )
    assert run_main(monkeypatch, "verify", "--rules", str(bad), str(data), *MODELS) == 2
    err = capsys.readouterr().err
    assert "no_such_checker" in err and "Traceback" not in err


def test_llm_rules_without_a_usable_model_is_a_user_error(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rules, data = files
    code = run_main(
        monkeypatch,
        "verify",
        "--rules",
        str(rules),
        str(data),
        "--sim-model",
        "fake:unregistered",
        "--sub-model",
        SUB,
        "--cache",
        "off",
    )
    assert code == 2
    assert "unknown fake model" in capsys.readouterr().err


def test_bad_record_line_names_file_line_and_field(
    files: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rules, _ = files
    data = tmp_path / "broken.jsonl"
    data.write_text('{"id": "a", "turns": []}\n{"id": "b", "turns": [{"role": "user"}]}\n')
    assert run_main(monkeypatch, "verify", "--rules", str(rules), str(data), *MODELS) == 2
    err = capsys.readouterr().err
    assert "broken.jsonl:2" in err and "turns.0.text" in err


def _closed_port() -> int:
    with socket.socket() as probe:  # bound then closed: nothing listens there
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_server_exits_non_zero_with_one_line_and_keeps_the_records(
    files: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rules, data = files
    down = f"openai-compatible:http://127.0.0.1:{_closed_port()}/v1#down"
    output = tmp_path / "verdicts.jsonl"
    monkeypatch.setenv("DOCKET_MAX_RETRIES", "0")
    args = ["verify", "--rules", str(rules), str(data), "--model", down, "--cache", "off"]
    code = run_main(monkeypatch, *args, "-o", str(output))
    assert code != 0
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and err[0].startswith("error: ")
    assert "could not reach their model" in err[0] and str(output) in err[0]
    verdicts = [json.loads(line) for line in output.read_text().splitlines()]
    results = [r for v in verdicts for r in v["results"]]
    llm = [r for r in results if r["tier"] != "fmt"]
    assert llm and {(r["status"], r["cause"]) for r in llm} == {
        ("needs_review", "model_unavailable")
    }
    assert {r["status"] for r in results if r["tier"] == "fmt"} <= {"pass", "fail"}


def test_a_bad_store_is_reported_before_the_first_llm_call(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    rules, data = files
    calls: list[str] = []

    def counted(request) -> str:  # type: ignore[no-untyped-def]
        calls.append(asked_rule(request))
        return "VERDICT: PASS"  # readable by both tiers

    model = register_fake("cli-counted", counted)
    bad = tmp_path / "notes.txt"
    bad.write_text("not a database\n" * 100, encoding="utf-8")
    args = ["verify", "run", "--rules", str(rules), str(data), "--model", model, "--cache", "off"]
    result = runner.invoke(app, [*args, "--db", str(bad)])
    assert result.exit_code != 0
    assert "not a SQLite file" in str(result.exception)
    assert calls == []  # refused before any check reached the model
    good = runner.invoke(app, [*args, "--db", str(tmp_path / "ok.db")])
    assert good.exit_code == 0, good.output
    assert calls  # the same command with a usable store does call the model
