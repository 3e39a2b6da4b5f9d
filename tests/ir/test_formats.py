"""Reading qrels, runs and queries: trec_eval order, duplicates, bad input."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from docket.errors import InputError
from docket.ir.formats import read_qrels, read_run, read_runs, write_qrels
from docket.ir.queries import read_queries


def test_qrels_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("1 0 a 2\n1 0 b 0\n\n2 Q0 c 1\n")
    qrels = read_qrels(path)
    assert qrels == {"1": {"a": 2, "b": 0}, "2": {"c": 1}}
    write_qrels(qrels, tmp_path / "out.txt")
    assert read_qrels(tmp_path / "out.txt") == qrels


@pytest.mark.parametrize(
    ("content", "line", "field", "words"),
    [
        ("1 0 a 1\n1 0 b\n", 2, None, "expected 4 columns"),
        ("1 0 a 1\n1 0 b x\n", 2, "grade", "not an integer"),
        ("1 0 a 7\n", 1, "grade", "unknown relevance value 7"),
        ("1 0 a 1\n1 0 a 0\n", 2, "grade", "judged twice"),
    ],
)
def test_bad_qrels(tmp_path: Path, content: str, line: int, field: str | None, words: str) -> None:
    path = tmp_path / "bad.qrels"
    path.write_text(content)
    with pytest.raises(InputError) as caught:
        read_qrels(path)
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), line, field)
    assert words in str(caught.value) and f"bad.qrels:{line}" in str(caught.value)


def test_grades_option_accepts_other_scales(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("1 0 a 7\n")
    assert read_qrels(path, grades=[0, 7]) == {"1": {"a": 7}}
    with pytest.raises(InputError):
        read_qrels(path, grades=[0, 1])


def test_run_is_ordered_like_trec_eval(tmp_path: Path) -> None:
    # rank column is ignored; ties on score are broken by docid descending
    path = tmp_path / "bm25.run"
    path.write_text("q Q0 a 1 1.0 t\nq Q0 b 2 3.0 t\nq Q0 c 3 1.0 t\nq Q0 d 4 2.5 t\n")
    run = read_run(path)
    assert run.name == "bm25"
    assert run.ranking == {"q": ("b", "d", "c", "a")}
    assert run.to_ir_measures(2) == {"q": {"b": 2.0, "d": 1.0}}


def test_duplicates_are_counted_and_first_kept(tmp_path: Path) -> None:
    path = tmp_path / "r.trec"
    path.write_text("q Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 a 3 9 t\nq2 Q0 a 1 1 t\n")
    run = read_run(path)
    assert run.duplicates == 1
    assert run.ranking["q"] == ("a", "b")


@pytest.mark.parametrize(
    ("line", "field", "words"),
    [
        ("q Q0 b 2 2.0", None, "expected 6 columns"),
        ("q Q0 b two 2.0 t", "rank", "rank 'two' is not an integer"),
        ("q Q0 b 2 high t", "score", "score 'high'"),
        ("q Q0 b 2 nan t", "score", "not a finite number"),
    ],
)
def test_bad_run_lines(tmp_path: Path, line: str, field: str | None, words: str) -> None:
    path = tmp_path / "r.trec"
    path.write_text(f"q Q0 a 1 3.0 t\n{line}\n")
    with pytest.raises(InputError) as caught:
        read_run(path)
    assert caught.value.line == 2 and caught.value.field == field
    assert words in str(caught.value) and "r.trec:2" in str(caught.value)


def test_empty_and_missing_run(tmp_path: Path) -> None:
    (tmp_path / "empty.trec").write_text("\n")
    with pytest.raises(InputError, match="empty"):
        read_run(tmp_path / "empty.trec")
    with pytest.raises(InputError, match="not found"):
        read_run(tmp_path / "nope.trec")


def test_gzipped_run_and_clashing_names(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with gzip.open(tmp_path / "a" / "sys.trec.gz", "wt") as handle:
        handle.write("q Q0 x 1 1 t\n")
    (tmp_path / "b" / "sys.trec").write_text("q Q0 y 1 1 t\n")
    runs = read_runs([tmp_path / "a" / "sys.trec.gz", tmp_path / "b" / "sys.trec"])
    assert [r.name for r in runs] == ["a/sys", "b/sys"]
    assert runs[0].ranking == {"q": ("x",)}


def test_queries_tsv_and_jsonl(tmp_path: Path) -> None:
    (tmp_path / "q.tsv").write_text("1\tfirst query\n2\tsecond\n")
    (tmp_path / "q.jsonl").write_text('{"_id": "1", "text": "first"}\n{"qid": 2, "query": "x"}\n')
    assert read_queries(tmp_path / "q.tsv") == {"1": "first query", "2": "second"}
    assert read_queries(tmp_path / "q.jsonl") == {"1": "first", "2": "x"}
    (tmp_path / "bad.jsonl").write_text('{"_id": "1"}\n')
    with pytest.raises(InputError, match="bad.jsonl:1: field 'text'"):
        read_queries(tmp_path / "bad.jsonl")
