"""Broken inputs through the entry point: each is one line naming the file, exit 2.

A ``.gz`` that is not gzip, damaged or cut short (it used to be a traceback, or only
"Aborted."); a ``docket.toml`` that is not UTF-8, holds a 5,000-digit integer or nests
arrays deeply (a traceback for every command); a JSONL file that starts with a byte-order
mark (read as a TSV with a bad header); a corpus or record with a lone surrogate.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import pytest

from docket.cli.main import main
from docket.ir.formats import read_qrels
from docket.jobs.inputs import job_input
from docket.reading import loads_json

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
QRELS = (EXAMPLES / "ir/qrels.txt").read_bytes()
RUN = EXAMPLES / "ir/bm25.trec"


def _main(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    """Run the entry point as a user would: exit code, stdout, and stderr's last line."""
    monkeypatch.setattr(sys, "argv", ["docket", *args])
    with pytest.raises(SystemExit) as caught:
        main()
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert "Traceback" not in err and "Aborted" not in err, err
    return caught.value.code, captured.out, err.splitlines()[-1] if err else ""


BROKEN_GZIP = {
    "not-gzip": (QRELS, "not a gzip file"),
    "cut-short": (gzip.compress(QRELS)[:-30], "cut short"),
    "damaged": (gzip.compress(QRELS)[:12] + b"\xff" * 40 + gzip.compress(QRELS)[52:], "gzip"),
}


@pytest.mark.parametrize("case", list(BROKEN_GZIP))
def test_a_broken_gzip_is_one_line_naming_the_file(
    case: str,
    tmp_path: Path,
    monkeypatch,
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    content, problem = BROKEN_GZIP[case]
    qrels = tmp_path / "qrels.txt.gz"
    qrels.write_bytes(content)
    args = ("eval", "systems", "--qrels", str(qrels), "--runs", str(RUN))
    code, _, err = _main(monkeypatch, capsys, *args)
    assert code == 2
    assert err.startswith(f"error: {qrels}: ") and problem in err, err


def test_a_good_gzip_still_reads(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt.gz"
    qrels.write_bytes(gzip.compress(QRELS))
    assert read_qrels(qrels) == read_qrels(EXAMPLES / "ir/qrels.txt")


BAD_TOML = {
    "not-utf8": (b'[docket]\ndb = "caf\xe9.db"\n', "not UTF-8"),
    "huge-integer": (b"[docket]\nconcurrency = " + b"9" * 5000 + b"\n", "docket.toml"),
    "nested": (b"[docket]\nx = " + b"[" * 5000 + b"]" * 5000 + b"\n", "docket.toml"),
    "not-a-table": (b"docket = 5\n", "must be a table"),
}


@pytest.mark.parametrize("case", list(BAD_TOML))
@pytest.mark.parametrize("command", [("export", "--job", "j", "-o", "out.qrels"), ("jobs",)])
def test_a_bad_docket_toml_is_one_line_for_every_command(
    case: str,
    command: tuple[str, ...],
    tmp_path: Path,
    monkeypatch,
    capsys,  # type: ignore[no-untyped-def]
) -> None:
    content, problem = BAD_TOML[case]
    (tmp_path / "docket.toml").write_bytes(content)
    monkeypatch.chdir(tmp_path)
    code, _, err = _main(monkeypatch, capsys, *command)
    assert code == 2
    assert err.startswith("error: docket.toml: ") and problem in err, err
    assert len(err) < 400


def test_a_bad_value_in_docket_toml_names_the_file(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "docket.toml").write_text("[docket]\nconcurrency = 0\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = _main(monkeypatch, capsys, "jobs")
    assert code == 2 and err.startswith("error: docket.toml: setting 'concurrency'"), err


def test_a_jsonl_file_with_a_byte_order_mark_is_read_as_jsonl(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.jsonl"
    lines = [
        {"qid": "q1", "query": "soft egg", "docid": "d1", "text": "Boil it for 6 minutes."},
        {"qid": "q1", "query": "soft egg", "docid": "d2", "text": "Tea is green."},
    ]
    pairs.write_text("\ufeff" + "".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    loaded = job_input(pairs)
    assert [p.docid for p in loaded] == ["d1", "d2"] and loaded.count == 2


def test_a_tsv_with_a_byte_order_mark_keeps_its_first_column(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("\ufeffqid\tquery\tdocid\ttext\nq1\tsoft egg\td1\tBoil it.\n", "utf-8")
    assert [p.qid for p in job_input(pairs)] == ["q1"]


def test_a_byte_order_mark_through_judge(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from docket.llm.fake import register_fake

    model = register_fake("bom-judge", lambda request: '{"label": "relevant", "reasoning": "x"}')
    pairs = tmp_path / "bom.jsonl"
    line = {"qid": "q1", "query": "soft egg", "docid": "d1", "text": "Boil it for 6 minutes."}
    pairs.write_bytes(b"\xef\xbb\xbf" + json.dumps(line).encode() + b"\n")
    db = str(tmp_path / "d.db")
    args = ("judge", str(pairs), "--method", "single", "--model", model, "--db", db)
    monkeypatch.setattr(sys, "argv", ["docket", *args, "--cache", "off"])
    try:
        main()
    except SystemExit as exit_:
        assert exit_.code in (0, None), capsys.readouterr().err
    assert "1 judged by this run" in capsys.readouterr().out


def test_a_lone_surrogate_in_json_is_an_input_error_naming_the_line() -> None:
    from docket.errors import InputError

    with pytest.raises(InputError, match="lone surrogate") as caught:
        loads_json('{"text": "bad \\ud800 half"}', "corpus.jsonl", 3)
    assert caught.value.one_line().startswith("corpus.jsonl:3: ")
    assert loads_json('{"text": "\\ud83d\\ude00"}') == {"text": "\U0001f600"}  # a valid pair


def test_a_corpus_line_with_a_lone_surrogate_is_refused(
    tmp_path: Path, monkeypatch, capsys
) -> None:  # type: ignore[no-untyped-def]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"_id": "e1", "text": "fine"}\n{"_id": "e2", "text": "bad \\udc80"}\n')
    from docket.errors import InputError
    from docket.ir.corpus import CorpusIndex, iter_corpus_file

    with pytest.raises(InputError, match="lone surrogate") as caught:
        CorpusIndex.build(iter_corpus_file(corpus), tmp_path / "index.sqlite")
    assert f"{corpus}:2" in caught.value.one_line()
    assert not (tmp_path / "index.sqlite").exists()
