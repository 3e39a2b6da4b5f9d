"""Verification figures that tell the truth: flags are failures, unread checks fail the run.

A ``not_yet`` result (a "4 to 12 turns" rule at turn two) is no flag in ``verify stats``
nor on the annotator page's accepted-and-fixed table; ``docket verify`` whose LLM checks
could not be read exits non-zero with one line, as ``judge`` does for failed pairs.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from docket.adherence.verify.history import record_feedback, save_verdict
from docket.adherence.verify.run_stats import flag_stats
from docket.adherence.verify.verdict import RuleResult, Verdict
from docket.adherence.web.handlers import stats_payload
from docket.cli.main import app, main
from docket.errors import InputError
from docket.llm.fake import register_fake
from docket.store.base import Store, open_store
from tests.adherence.verify_helpers import RULES

runner = CliRunner()


def _verdict(record_id: str, turn: int | None, **statuses: str) -> Verdict:
    results = [
        RuleResult(rule_id=rule, tier="fmt", status=status)  # type: ignore[arg-type]
        for rule, status in statuses.items()
    ]
    return Verdict(record_id=record_id, turn=turn, status="fail", results=results)


def _save(store: Store, run_id: str, verdict: Verdict, annotator: str = "ann") -> None:
    save_verdict(store, run_id, verdict, source="api", annotator=annotator)


def test_stats_count_only_failures_as_flags_not_not_yet(db_url: str) -> None:
    store = open_store(db_url)
    _save(store, "r1", _verdict("d1", 1, LEN="not_yet", URL="fail", POLITE="pass"))
    store.close()
    result = runner.invoke(app, ["verify", "stats", "--db", db_url, "--json"])
    assert result.exit_code == 0, result.output
    flags = {row["rule_id"]: row["flags"] for row in json.loads(result.output)["by_rule"]}
    assert flags == {"URL": 1}  # the not_yet length rule is no flag


def test_the_annotator_page_table_and_feedback_ignore_not_yet(store: Store) -> None:
    _save(store, "r1", _verdict("d1", 1, LEN="not_yet", URL="fail"))
    by_tier = stats_payload(store).by_tier
    assert [(row["tier"], row["flags"]) for row in by_tier] == [("fmt", 1)]
    with store.session() as session:
        from docket.adherence.models import VerificationResult

        not_yet = session.query(VerificationResult).filter_by(rule_id="LEN").one().id
    with pytest.raises(InputError, match="only flagged results"):
        record_feedback(store, not_yet, "accepted", "ann")


def test_flag_rates_per_rule_and_annotator_and_fixes_in_updates(store: Store) -> None:
    _save(store, "a1", _verdict("t1", 2, URL="fail", LEN="not_yet", POLITE="pass"), "ann")
    _save(store, "a2", _verdict("t1", 2, URL="pass", LEN="not_yet", POLITE="pass"), "ann")
    _save(store, "b1", _verdict("t2", 2, URL="fail", POLITE="fail"), "bob")
    by_rule, by_annotator = flag_stats(store)
    rules = {row.key: (row.checked, row.flags, row.flagged_items, row.fixed) for row in by_rule}
    assert rules == {"URL": (3, 2, 2, 1), "POLITE": (3, 1, 1, 0)}
    people = {row.key: (row.checked, row.flags, row.fixed) for row in by_annotator}
    assert people == {"ann": (4, 1, 1), "bob": (2, 2, 0)}
    assert by_annotator[0].flag_rate == 0.25


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(RULES, sort_keys=False), encoding="utf-8")
    data = tmp_path / "data.jsonl"
    turns = [{"role": "user", "text": "Hi"}, {"role": "assistant", "text": "Hello."}]
    data.write_text(json.dumps({"id": "d1", "turns": turns}) + "\n", encoding="utf-8")
    return rules, data


def _exit_code(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["docket", *args])
    try:
        main()
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def test_verify_exits_non_zero_with_one_line_when_no_llm_check_could_be_read(
    files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rules, data = files
    babble = register_fake("figures-babble", lambda request: "I would rather talk about cats.")
    args = ["verify", "--rules", str(rules), str(data), "--model", babble, "--cache", "off"]
    code = _exit_code(monkeypatch, *args)
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert code != 0
    assert len(err) == 1 and "could not be read" in err[0], err
    assert "4 of 4 LLM checks" in err[0]
