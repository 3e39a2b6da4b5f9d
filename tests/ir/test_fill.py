"""Filling holes with a Judge, provenance records and qrels at each trust level."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from docket.errors import InputError
from docket.holes.fill import build_pairs, summarize_fill
from docket.ir.corpus import open_corpus
from docket.ir.formats import Run
from docket.ir.holes import find_holes
from docket.ir.provenance import (
    ProvenanceRecord,
    compose_qrels,
    read_provenance,
    write_provenance,
)
from docket.jobs import run_job
from docket.relevance.types import Judgment, Pair

from .conftest import HOLE_LABELS, QRELS, QUERIES, RUNS, TableJudge


def _holes() -> list[tuple[str, str]]:
    runs = [Run(n, {q: tuple(d) for q, d in r.items()}) for n, r in RUNS.items()]
    return find_holes(QRELS, runs, 3).hole_keys


def test_build_pairs_counts_missing_texts(bench) -> None:
    corpus = open_corpus(bench.corpus, bench.index)
    keys = [("q1", "d7"), ("q1", "d404"), ("q7", "d1"), ("q1", "d1")]
    result = build_pairs(keys, QUERIES, corpus, QRELS, rel_level=1)
    assert [p.key for p in result.pairs] == [("q1", "d7"), ("q1", "d1")]
    assert result.missing_documents == (("q1", "d404"),)
    assert result.missing_queries == (("q7", "d1"),)
    hole, judged = result.pairs
    assert (hole.label, judged.label, judged.grade) == (None, 1, 1)
    assert "Zebra" in hole.text and hole.query == QUERIES["q1"]


def _judgments(escalate=frozenset()) -> list[Judgment]:
    judge = TableJudge(HOLE_LABELS, escalate=escalate)
    pairs = [Pair(q, QUERIES[q], d, "text") for q, d in _holes()]
    with tempfile.TemporaryDirectory() as folder:
        run = run_job(pairs, judge=judge, db=f"{folder}/docket.db", cache="off", job="fill")
        return sorted((j for _, j in run.judgments()), key=lambda j: (j.qid, j.docid))


def test_levels_of_completed_qrels() -> None:
    judgments = _judgments(escalate=frozenset({("q2", "d6")}))
    human = ProvenanceRecord(qid="q2", docid="d6", relevance=1, label=1, source="human")
    records = [*judgments, human]
    assert compose_qrels(QRELS, records, "original") == QRELS
    automatic = compose_qrels(QRELS, records, "automatic", rel_level=2)
    assert automatic["q1"] == {**QRELS["q1"], "d7": 2, "d8": 2, "d9": 0}
    assert "d6" not in automatic["q2"]  # escalated, pending
    reviewed = compose_qrels(QRELS, records, "reviewed")
    assert reviewed["q2"]["d6"] == 1 and reviewed["q2"]["d8"] == 1


def test_human_overrides_automatic_but_never_the_original() -> None:
    records = [
        ProvenanceRecord(qid="q1", docid="d7", relevance=1, label=1, source="consensus", rounds=1),
        ProvenanceRecord(qid="q1", docid="d7", relevance=0, label=0, source="human"),
        ProvenanceRecord(qid="q1", docid="d7", relevance=1, label=1, source="adjudicator"),
        ProvenanceRecord(qid="q1", docid="d1", relevance=0, label=0, source="human"),
    ]
    reviewed = compose_qrels(QRELS, records, "reviewed")
    assert reviewed["q1"]["d7"] == 0 and reviewed["q1"]["d1"] == 1
    assert compose_qrels(QRELS, records, "automatic")["q1"]["d7"] == 1


def test_summarize_fill_with_audit_and_provenance_file(tmp_path: Path) -> None:
    judgments = _judgments(escalate=frozenset({("q2", "d6")}))
    # audit: the judge calls original d1 (grade 1) irrelevant and d2 (grade 0) irrelevant
    judgments += [
        Judgment("q1", "d1", "table", 0, "consensus"),
        Judgment("q1", "d2", "table", 0, "judge"),
    ]
    result = summarize_fill(QRELS, judgments, level="reviewed")
    assert [(r.qid, r.docid, r.original) for r in result.disagreements] == [("q1", "d1", 1)]
    assert result.completed["q1"]["d1"] == 1  # the audit does not change original labels
    assert result.counts == {
        "consensus": 5,
        "escalated-pending": 1,
        "audit consensus": 1,
        "audit judge": 1,
    }
    sources = [r.source for r in result.records]
    assert sources[:5] == ["original"] * 5
    write_provenance(result.records, tmp_path / "prov.jsonl")
    again = read_provenance(tmp_path / "prov.jsonl")
    assert again == list(result.records)
    assert compose_qrels(QRELS, again, "automatic") == result.completed


def test_bad_provenance_line(tmp_path: Path) -> None:
    path = tmp_path / "prov.jsonl"
    path.write_text('{"qid": "q", "docid": "d", "relevance": 1, "label": 1, "source": "oracle"}\n')
    with pytest.raises(InputError, match="prov.jsonl:1: field 'source'"):
        read_provenance(path)
