"""One policy for every output path: a missing folder is created before any work, and a
path that cannot be written is one line and exit 2, never a traceback after the work."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from docket.cli.main import main
from tests.ir.conftest import make_bench


def _main(monkeypatch, capsys, *args: object) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["docket", *map(str, args)])
    with pytest.raises(SystemExit) as caught:
        main()
    captured = capsys.readouterr()
    return caught.value.code or 0, captured.out, captured.err


def _runs(bench) -> list[object]:  # type: ignore[no-untyped-def]
    return ["--runs", *bench.runs]


@pytest.mark.parametrize("flag", ["--out", "--report"])
def test_holes_find_creates_the_missing_folder(tmp_path: Path, monkeypatch, capsys, flag) -> None:  # type: ignore[no-untyped-def]
    bench = make_bench(tmp_path)
    target = tmp_path / "new" / "deeper" / "holes.json"
    code, _, err = _main(monkeypatch, capsys, "holes", "find", "--qrels", bench.qrels,
                         *_runs(bench), "--depth", 3, flag, target)  # fmt: skip
    assert code == 0, err
    assert target.exists() and target.stat().st_size > 0


@pytest.mark.parametrize("flag", ["--plot", "--out"])
def test_eval_systems_outputs_in_a_missing_folder(
    tmp_path: Path, monkeypatch, capsys, flag
) -> None:  # type: ignore[no-untyped-def]
    bench = make_bench(tmp_path)
    target = tmp_path / "reports" / ("shifts.png" if flag == "--plot" else "r.json")
    code, _, err = _main(monkeypatch, capsys, "eval", "systems", "--qrels", bench.qrels,
                         "--completed-qrels", bench.completed, *_runs(bench), flag, target)  # fmt: skip
    assert code == 0, err
    assert target.exists()


def test_review_export_labelstudio_into_a_missing_folder(
    tmp_path: Path, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    target = tmp_path / "ls" / "tasks.json"
    db = tmp_path / "d.db"
    from docket.store import open_store

    open_store(db).close()
    code, _, err = _main(monkeypatch, capsys, "review", "export-labelstudio", target, "--db", db)
    assert code == 0, err
    assert target.exists()


def test_an_unwritable_output_is_one_line_before_any_work(
    tmp_path: Path, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    bench = make_bench(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    code, out, err = _main(monkeypatch, capsys, "holes", "fill", "--qrels", bench.qrels,
                           *_runs(bench), "--corpus", bench.corpus, "--queries", bench.queries,
                           "--model", "fake:never-called", "--db", tmp_path / "d.db",
                           "--out-qrels", blocker / "sub" / "c.qrels",
                           "--provenance", tmp_path / "p.jsonl")  # fmt: skip
    assert code == 2 and "Traceback" not in err
    assert "--out-qrels" in err and "cannot create the folder" in err
    assert not (tmp_path / "d.db").exists()  # refused while parsing flags: nothing was done
    code, _, err = _main(monkeypatch, capsys, "holes", "find", "--qrels", bench.qrels,
                         *_runs(bench), "--out", tmp_path)  # fmt: skip
    assert code == 2 and "is a folder" in err
