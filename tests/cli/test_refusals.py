"""Inputs that used to be accepted silently or fail with exit 0: each is one line, exit 2,
and nothing is written (through the installed entry point, as a user runs it)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from docket.cli.main import main
from tests.adherence.bench_helpers import SOP, clean_seeds, fake_model, generator, write_seeds

RULES = str(SOP / "rules.yaml")


def _main(monkeypatch, capsys, *args: str) -> tuple[int, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["docket", *args])
    with pytest.raises(SystemExit) as caught:
        main()
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err, err
    last = err.splitlines()[-1]  # warnings may come before; the error is one whole line
    assert last.startswith("error: "), err
    return caught.value.code, last


def _rules(tmp_path: Path, rule: str) -> Path:
    path = tmp_path / "rules.yaml"
    path.write_text(f"name: t\nrules:\n{rule}")
    return path


def _records(tmp_path: Path, *records: dict) -> Path:
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_role_typo_in_a_scope_is_refused(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    rule = "  - id: r1\n    text: Be polite.\n    tier: sim\n    scope: {kind: role, role: assistent}\n"
    path = _rules(tmp_path, rule)
    code, err = _main(monkeypatch, capsys, "rules", "validate", str(path))
    assert code == 2
    assert err.startswith(f"error: {path}:3: field 'rules[0] (id 'r1').scope'")
    assert "unknown role 'assistent': did you mean 'assistant'?" in err
    assert "known roles: user, assistant, system, tool" in err


def test_a_role_typo_in_a_checker_parameter_is_refused(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    rule = (
        "  - id: r1\n    text: Two turns.\n    tier: fmt\n    scope: {kind: record}\n"
        "    check: {checker: turn_count, params: {role: User, max: 2}}\n"
    )
    code, err = _main(monkeypatch, capsys, "rules", "validate", str(_rules(tmp_path, rule)))
    assert code == 2 and "did you mean 'user'?" in err


def test_a_rule_whose_text_is_none_is_refused(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    for text in ("None", "'  '"):
        path = _rules(tmp_path, f"  - id: r1\n    text: {text}\n    tier: sim\n")
        code, err = _main(monkeypatch, capsys, "rules", "validate", str(path))
        assert code == 2 and "field 'rules[0] (id 'r1').text'" in err and "empty" in err


@pytest.mark.parametrize(
    ("record", "where", "problem"),
    [
        ({"id": "d1"}, "field 'turns'", "every record lists its 'turns'"),
        (
            {"id": "d1", "turns": [{"role": "assistent", "text": "Hi"}]},
            "field 'turns.0.role'",
            "did you mean 'assistant'? (known roles: user, assistant, system, tool)",
        ),
    ],
)
def test_records_without_turns_or_with_a_role_typo_are_refused(  # type: ignore[no-untyped-def]
    tmp_path, monkeypatch, capsys, record, where, problem
) -> None:
    path = _records(tmp_path, {"id": "ok", "turns": []}, record)
    args = ("verify", "run", str(path), "--rules", RULES, "--db", str(tmp_path / "v.db"))
    code, err = _main(monkeypatch, capsys, *args)
    assert code == 2 and err.startswith(f"error: {path}:2: {where}") and problem in err
    assert not (tmp_path / "v.db").exists()


def test_other_roles_are_still_allowed(tmp_path: Path) -> None:
    from docket.adherence.record import read_records

    path = _records(tmp_path, {"id": "d1", "turns": [{"role": "customer", "text": "Hi"}]})
    assert read_records(path)[0].turns[0].role == "customer"


def test_a_token_name_that_is_no_name_is_refused(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    db = tmp_path / "t.db"
    code, err = _main(monkeypatch, capsys, "verify", "token", "add", "bad name!", "--db", str(db))
    assert code == 2 and "field 'name'" in err and "'bad name!'" in err
    assert "letters, digits, '_', '.', '@' or '-'" in err  # what a name may hold
    assert not db.exists()


def test_significance_with_one_system_is_refused(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    qrels, run = tmp_path / "q.txt", tmp_path / "A.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n")
    run.write_text("q1 Q0 d1 1 2.0 A\nq1 Q0 d2 2 1.0 A\n")
    args = ("eval", "systems", "--qrels", str(qrels), "--runs", str(run), "--significance")
    code, err = _main(monkeypatch, capsys, *args)
    assert code == 2 and "significance tests compare pairs of systems" in err
    assert "1 system(s) were given" in err and "two or more runs" in err


def test_a_build_that_keeps_no_sample_writes_nothing(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    seeds = write_seeds(tmp_path / "seeds.jsonl", clean_seeds())
    fake_model("refusals-gen", generator())
    # the judge never sees the violation: every sample is dropped ("rule not broken")
    fake_model("refusals-judge", _always_pass)
    out = tmp_path / "ds.jsonl"
    args = ("bench", "readeval", "build", "-r", RULES, "--seeds", str(seeds), "-o", str(out))
    args += ("--tiers", "sim", "--samples", "2", "--generator-model", "fake:refusals-gen")
    args += ("--judge-model", "fake:refusals-judge")
    code, err = _main(monkeypatch, capsys, *args, "--cache", "off")
    assert code == 2 and "no sample was kept" in err
    assert not out.exists()


def test_a_run_on_an_empty_dataset_is_refused(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from docket.readeval.dataset import read_dataset, write_dataset

    seeds = write_seeds(tmp_path / "seeds.jsonl", clean_seeds())
    built = tmp_path / "ds.jsonl"
    args = ("bench", "readeval", "build", "-r", RULES, "--seeds", str(seeds), "-o", str(built))
    assert _main_ok(monkeypatch, *args, "--samples", "2", "--cache", "off")
    capsys.readouterr()  # the build's own lines
    empty = tmp_path / "empty.jsonl"
    write_dataset(empty, read_dataset(built).model_copy(update={"samples": []}))
    code, err = _main(
        monkeypatch, capsys, "bench", "readeval", "run", "-d", str(empty), "-r", RULES
    )
    assert code == 2 and "the dataset holds no samples" in err and str(empty) in err


def _main_ok(monkeypatch, *args: str) -> bool:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["docket", *args])
    try:
        main()
    except SystemExit as stop:
        return stop.code in (0, None)
    return True


def _always_pass(request) -> str:  # type: ignore[no-untyped-def]
    sub = "REASONING:" in request.messages[-1].content
    return "REASONING: fine.\nVERDICT: PASS" if sub else "PASS"
