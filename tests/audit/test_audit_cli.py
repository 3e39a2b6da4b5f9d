"""``docket audit`` and ``export --card`` through the entry point: output, and bad input as
one line with exit 2."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from docket.cli.main import main
from docket.store.base import open_store
from tests.audit.test_draw import _job


def _main(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["docket", *args])
    code = 0
    try:
        main()
    except SystemExit as exc:
        code = exc.code or 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err, captured.err
    return code, captured.out, captured.err.strip()


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = str(tmp_path / "cli.db")
    store = open_store(path)
    _job(store)
    store.close()
    return path


def test_draw_plan_report_and_card(monkeypatch, capsys, db: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code, out, _ = _main(
        monkeypatch, capsys, "audit", "draw", "--job", "j", "--size", "10%", "--db", db
    )
    assert code == 0 and "18 pairs (18 new)" in out and "20 escalated pairs" in out
    code, out, _ = _main(monkeypatch, capsys, "audit", "plan", "--job", "j", "--width", "0.1",
                         "--prior-error", "0.2", "--db", db)  # fmt: skip
    assert code == 0 and "18 drawn" in out
    code, out, _ = _main(monkeypatch, capsys, "audit", "report", "--job", "j", "--json", "--db", db)
    data = json.loads(out)
    assert code == 0 and data["automatic_accuracy"]["n"] == 0
    assert any("not fully answered: 0 of 18" in w for w in data["warnings"])
    code, out, _ = _main(monkeypatch, capsys, "audit", "report", "--job", "j", "--db", db)
    assert code == 0 and "Accuracy of the automatic labels" in out
    card = tmp_path / "out" / "card.md"
    code, out, _ = _main(
        monkeypatch, capsys, "export", "--job", "j", "--card", str(card), "--db", db
    )
    assert code == 0, out
    assert "## Provenance" in card.read_text()
    assert json.loads(card.with_suffix(".json").read_text())["provenance"]["method"] == "dream"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("audit", "draw", "--job", "j", "--size", "181"), "180 automatic labels"),
        (("audit", "draw", "--job", "nope", "--size", "5"), "no job named 'nope'"),
        (("audit", "report", "--job", "nope"), "no job named 'nope'"),
        (("audit", "plan", "--job", "j", "--width", "2"), "--width must be between 0 and 1"),
        (("audit", "report", "--job", "j", "--confidence", "1.5"), "--confidence"),
        (("audit", "draw", "--job", "j", "--size", "5", "--oversample", "x"), "STRATUM=FACTOR"),
        (("export", "--job", "j", "--runs", "r.trec"), "pass --out FILE"),
        (("audit", "draw", "--job", "j", "--size", "5", "--by", "topic"), "--by must be one of"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(monkeypatch, capsys, db: str, args, message) -> None:  # type: ignore[no-untyped-def]
    code, _, err = _main(monkeypatch, capsys, *args, "--db", db)
    assert code == 2 and len(err.splitlines()) == 1 and message in err, err
