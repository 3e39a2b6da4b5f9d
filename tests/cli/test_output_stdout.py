"""``-o -`` (and every output flag given ``-``) writes to standard output, not a file
named ``-``; the command's own tables and messages then go to standard error, so the
output can be piped into trec_eval scripts. A plot cannot go there and says so."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from docket.cli.main import main
from docket.ir.formats import read_qrels
from docket.llm.fake import register_fake
from tests.ir.conftest import make_bench
from tests.jobs.fakes import EXAMPLES, Counting

IR = Path(__file__).resolve().parents[2] / "examples" / "ir"


def _main(monkeypatch, capsys, *args: object) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["docket", *map(str, args)])
    with pytest.raises(SystemExit) as caught:
        main()
    captured = capsys.readouterr()
    return caught.value.code or 0, captured.out, captured.err


def _judged(tmp_path, monkeypatch, capsys, fake: str) -> Path:  # type: ignore[no-untyped-def]
    """A store in ``tmp_path`` with job ``j``: the 12 example pairs, judged by a fake."""
    monkeypatch.chdir(tmp_path)
    model = register_fake(fake, Counting())
    db = tmp_path / "d.db"
    code, _, err = _main(monkeypatch, capsys, "judge", EXAMPLES, "--model", model, "--db", db,
                         "--job", "j", "--cache", "off")  # fmt: skip
    assert code == 0, err
    return db


def test_export_to_stdout_writes_qrels_there_and_no_file(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    db = _judged(tmp_path, monkeypatch, capsys, "stdout-export")
    code, out, err = _main(monkeypatch, capsys, "export", "--job", "j", "--db", db, "-o", "-")
    assert code == 0, err
    assert not (tmp_path / "-").exists()
    lines = out.splitlines()
    assert len(lines) == 12 and all(len(line.split()) == 4 for line in lines), out
    assert "wrote 12 qrels lines to -" in err
    code, out, _ = _main(monkeypatch, capsys, "export", "--job", "j", "--db", db, "-o", "-",
                         "--format", "jsonl")  # fmt: skip
    assert code == 0 and len([json.loads(line) for line in out.splitlines()]) == 12


def test_trec_eval_to_stdout_is_only_trec_eval_text(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)
    code, out, err = _main(monkeypatch, capsys, "eval", "systems", "--qrels", IR / "qrels.txt",
                           "--runs", IR / "bm25.trec", "--trec-eval", "-")  # fmt: skip
    assert code == 0, err
    assert not (tmp_path / "-").exists()
    rows = [line.split("\t") for line in out.splitlines()]
    assert rows and all(len(row) == 3 for row in rows), out[:500]
    assert "Systems ranked by" in err  # the tables went to stderr


def test_holes_to_stdout(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    bench = make_bench(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = _main(monkeypatch, capsys, "holes", "find", "--qrels", bench.qrels,
                           "--runs", *bench.runs, "--depth", 3, "--out", "-")  # fmt: skip
    assert code == 0, err
    holes = [json.loads(line) for line in out.splitlines()]
    assert holes and {"qid", "docid", "best_rank"} <= set(holes[0])
    assert not (tmp_path / "-").exists()


def test_compose_to_stdout(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    provenance = tmp_path / "p.jsonl"
    record = {"qid": "q1", "docid": "new", "relevance": 1, "label": 1, "source": "consensus",
              "rounds": 1, "method": "dream", "model": "local"}  # fmt: skip
    provenance.write_text(json.dumps(record) + "\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = _main(monkeypatch, capsys, "holes", "compose", "--qrels", IR / "qrels.txt",
                           "--provenance", provenance, "--out-qrels", "-")  # fmt: skip
    assert code == 0, err
    (tmp_path / "back.qrels").write_text(out)
    assert read_qrels(tmp_path / "back.qrels")["q1"]["new"] == 1
    assert not (tmp_path / "-").exists()


def test_a_plot_to_stdout_is_refused(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("COLUMNS", "200")
    code, _, err = _main(monkeypatch, capsys, "eval", "systems", "--qrels", IR / "qrels.txt",
                         "--runs", IR / "bm25.trec", "--plot", "-")  # fmt: skip
    assert code == 2 and "give a file name, not '-'" in err


AGREE = register_fake(
    "stdout-agree", lambda _request: "LABEL: relevant\nEVIDENCE: S1\nREASONING: it answers."
)


def test_holes_fill_to_stdout_is_only_qrels(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    bench = make_bench(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = _main(monkeypatch, capsys, "holes", "fill", "--qrels", bench.qrels,
                           "--runs", *bench.runs, "--depth", 3, "--corpus", bench.corpus,
                           "--corpus-index", bench.index, "--queries", bench.queries,
                           "--model", AGREE, "--cache", "off", "--db", tmp_path / "d.db",
                           "--out-qrels", "-", "--provenance", tmp_path / "p.jsonl")  # fmt: skip
    assert code == 0, err
    (tmp_path / "back.qrels").write_text(out)
    assert read_qrels(tmp_path / "back.qrels")  # every stdout line is a qrels line
    assert "judged" in err and "decided" in err  # the summary went to stderr
    assert not (tmp_path / "-").exists()


def test_rules_files_to_stdout_are_only_the_file(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    import yaml

    sop = tmp_path / "sop.md"
    sop.write_text("# Style\n\n## 1.1 Length\n\nEach answer has at most 50 words.\n")
    rule = {"text": "Each answer has at most 50 words.", "tier": "fmt", "scope": "record",
            "lines": [5, 5], "check": {"checker": "word_count", "params": {"max": 50}}}  # fmt: skip
    model = register_fake(
        "stdout-rules",
        lambda r: (
            '{"atomic": true, "overlaps": null}'
            if r.messages[1].content.startswith("Rules kept so far:")
            else json.dumps(rule)
        ),
    )
    code, out, err = _main(monkeypatch, capsys, "rules", "extract", sop, "-o", "-", "--model",
                           model, "--cache", "off", "--report", tmp_path / "r.json")  # fmt: skip
    assert code == 0, err
    assert [r["id"] for r in yaml.safe_load(out)["rules"]] == ["R1"]
    assert "wrote 1 rules to -" in err
    code, out, err = _main(monkeypatch, capsys, "rules", "stability", sop, "--runs", 2,
                           "--model", model, "--cache", "off", "--json", "-")  # fmt: skip
    assert code == 0, err
    assert json.loads(out)["runs"] == 2  # stdout is the JSON report alone
    assert "rule-set stability over 2 runs" in err


def test_export_card_with_qrels_to_stdout(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    db = _judged(tmp_path, monkeypatch, capsys, "stdout-card")
    code, out, err = _main(monkeypatch, capsys, "export", "--job", "j", "--db", db, "-o", "-",
                           "--card", tmp_path / "card.md")  # fmt: skip
    assert code == 0, err
    lines = out.splitlines()
    assert len(lines) == 12 and all(len(line.split()) == 4 for line in lines), out
    assert "dataset card" in err
    # the next command in the same process prints its messages on stdout again
    code, out, _ = _main(monkeypatch, capsys, "export", "--job", "j", "--db", db, "-o",
                         tmp_path / "q.txt")  # fmt: skip
    assert code == 0 and "wrote 12 qrels lines" in out
