"""Corpora: streamed into a SQLite index, reused while unchanged, bad lines refused."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from docket.errors import InputError, MissingDependencyError
from docket.ir.corpus import CorpusIndex, Document, open_corpus


def _jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_jsonl_corpus_with_titles_and_duplicates(tmp_path: Path) -> None:
    corpus = _jsonl(
        tmp_path / "corpus.jsonl",
        [
            {"_id": "a", "title": "Zebras", "text": "Zebras are striped."},
            {"id": "b", "text": "Horses run."},
            {"_id": "a", "text": "a second a, ignored"},
        ],
    )
    index = open_corpus(corpus, tmp_path / "idx.sqlite")
    assert (index.size, index.duplicates) == (2, 1)
    found = index.get_many(["a", "b", "missing"])
    assert set(found) == {"a", "b"}
    assert found["a"].passage == "Zebras\n\nZebras are striped."
    assert found["b"] == Document("b", "Horses run.", "")


def test_tsv_corpus_with_header(tmp_path: Path) -> None:
    path = tmp_path / "collection.tsv"
    path.write_text("id\ttext\ttitle\n1\tfirst passage\tT1\n2\tsecond passage\n")
    index = open_corpus(path, tmp_path / "idx.sqlite")
    assert index.get_many(["1", "2"]) == {
        "1": Document("1", "first passage", "T1"),
        "2": Document("2", "second passage", ""),
    }


def test_index_is_reused_until_the_source_changes(tmp_path: Path) -> None:
    corpus = _jsonl(tmp_path / "c.jsonl", [{"_id": "a", "text": "one"}])
    target = tmp_path / "idx.sqlite"
    open_corpus(corpus, target).close()
    first = target.stat().st_mtime_ns
    open_corpus(corpus, target).close()
    assert target.stat().st_mtime_ns == first  # not rebuilt
    _jsonl(corpus, [{"_id": "a", "text": "one"}, {"_id": "b", "text": "two"}])
    assert set(open_corpus(corpus, target).get_many(["a", "b"])) == {"a", "b"}


def test_bad_line_leaves_no_index(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"_id": "a", "text": "ok"}\n{"_id": "b"}\n')
    target = tmp_path / "idx.sqlite"
    with pytest.raises(InputError, match="c.jsonl:2: field 'text'"):
        open_corpus(corpus, target)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]  # no index, no temp file


def test_two_builders_of_one_index_never_disturb_each_other(tmp_path: Path) -> None:
    # Two workers index the same corpus into the shared cache at once: each writes its
    # own temporary file, and both renames succeed (CI once lost a worker here, when
    # both wrote one fixed ".partial" name and the second rename found it gone).
    target = tmp_path / "idx.sqlite"
    built: list[CorpusIndex] = []

    def documents(n: int):
        yield Document("a", f"from builder {n}")
        if n == 1:  # the second builder starts and finishes while the first is half-way
            built.append(CorpusIndex.build(documents(2), target))
        yield Document("b", "two")

    first = CorpusIndex.build(documents(1), target)
    assert [i.size for i in (first, *built)] == [2, 2]
    assert first.get_many(["a"])["a"].text == "from builder 1"  # the last rename wins
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx.sqlite"]


def test_build_streams_in_batches(tmp_path: Path) -> None:
    documents = (Document(f"d{i}", f"text {i}") for i in range(2_500))
    index = CorpusIndex.build(documents, tmp_path / "idx.sqlite", batch=1_000)
    assert index.size == 2_500
    assert index.get_many([f"d{i}" for i in range(0, 2_500, 7)])["d2499"].text == "text 2499"


def test_unknown_format_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "c.parquet").write_text("x")
    with pytest.raises(InputError, match="unknown corpus format"):
        open_corpus(tmp_path / "c.parquet", tmp_path / "i.sqlite")
    with pytest.raises(InputError, match="corpus not found"):
        open_corpus(tmp_path / "nope.jsonl", tmp_path / "i.sqlite")


def test_ir_datasets_missing_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ir_datasets", None)  # import fails
    with pytest.raises(MissingDependencyError, match="ir_datasets") as caught:
        open_corpus("irds:msmarco-passage")
    assert "docket[ir]" in caught.value.hint
