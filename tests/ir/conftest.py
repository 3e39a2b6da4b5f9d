"""Small hand-made benchmark: 2 queries, 3 systems, qrels with known holes.

Hole@3 by hand: A = (1/3 + 1/3) / 2 = 1/3; B = (2/3 + 2/3) / 2 = 2/3; C = 0.
Holes at depth 3: q1 -> d7, d8, d9; q2 -> d9, d6, d8 (six in all, pool of 11 pairs).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from docket.relevance.types import Judgment, Pair

QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d4": 1, "d5": 0}}
RUNS = {
    "A": {"q1": ["d1", "d9", "d2"], "q2": ["d4", "d5", "d8"]},
    "B": {"q1": ["d7", "d8", "d1"], "q2": ["d9", "d4", "d6"]},
    "C": {"q1": ["d3", "d1", "d2"], "q2": ["d5", "d4"]},
}
# Labels for the holes used as "completed" judgments in the tests.
# A hole is relevant exactly when its document mentions zebras (d7, d8).
HOLE_LABELS = {
    ("q1", "d7"): 1,
    ("q1", "d8"): 1,
    ("q1", "d9"): 0,
    ("q2", "d9"): 0,
    ("q2", "d6"): 0,
    ("q2", "d8"): 1,
}
RELEVANT_DOCS = {"d7", "d8"}
QUERIES = {"q1": "what do striped horses eat", "q2": "where do striped horses live"}
DOCS = [f"d{i}" for i in range(1, 10)]


def write_qrels(path: Path, qrels: dict) -> Path:
    lines = [f"{q} 0 {d} {g}" for q, docs in qrels.items() for d, g in docs.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_run(path: Path, ranking: dict, tag: str = "sys") -> Path:
    lines = []
    for qid, docs in ranking.items():
        lines += [f"{qid} Q0 {d} {r} {10.0 - r} {tag}" for r, d in enumerate(docs, start=1)]
    path.write_text("\n".join(lines) + "\n")
    return path


@dataclass
class Bench:
    qrels: Path
    runs: list[Path]
    queries: Path
    corpus: Path
    index: Path
    completed: Path


def doc_text(docid: str) -> str:
    # The fake model of the CLI tests keys on "zebra"; its agents never agree on "ambiguous".
    extra = "Zebra herds graze on grass." if docid in RELEVANT_DOCS else "Nothing useful here."
    extra = "Ambiguous stripes." if docid == "d6" else extra
    return f"Passage {docid}. {extra}"


@pytest.fixture
def bench(tmp_path: Path) -> Bench:
    return make_bench(tmp_path)


def make_bench(tmp_path: Path) -> Bench:
    """The benchmark's files in ``tmp_path`` (also used by the Ray tests)."""
    qrels = write_qrels(tmp_path / "qrels.txt", QRELS)
    runs = [write_run(tmp_path / f"{name}.trec", r, name) for name, r in RUNS.items()]
    queries = tmp_path / "queries.tsv"
    queries.write_text("".join(f"{q}\t{t}\n" for q, t in QUERIES.items()))
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text(
        "".join(json.dumps({"_id": d, "title": "", "text": doc_text(d)}) + "\n" for d in DOCS)
    )
    completed = {q: dict(docs) for q, docs in QRELS.items()}
    for (q, d), label in HOLE_LABELS.items():
        completed[q][d] = label
    return Bench(
        qrels,
        runs,
        queries,
        corpus,
        tmp_path / "corpus.sqlite",
        write_qrels(tmp_path / "completed.txt", completed),
    )


@dataclass
class TableJudge:
    """A Judge that answers from a table; keys in ``escalate`` go to a human."""

    labels: dict
    escalate: frozenset = frozenset()
    method: str = "table"
    seen: list | None = None

    async def judge(self, pair: Pair) -> Judgment:
        if self.seen is not None:
            self.seen.append(pair)
        if pair.key in self.escalate:
            return Judgment(pair.qid, pair.docid, self.method, None, "escalated", rounds=2)
        label = self.labels.get(pair.key, 0)
        return Judgment(
            pair.qid, pair.docid, self.method, label, "consensus", rounds=1, model="fake:table"
        )

    def finalize(self, judgments: list[Judgment]) -> list[Judgment]:
        return judgments


@pytest.fixture
def irds_id(bench, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Register the bench's qrels and queries as a local ir_datasets dataset."""
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "irds-home"))
    import ir_datasets
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvQueries
    from ir_datasets.util import LocalDownload

    name = f"docket-test/{uuid.uuid4().hex[:8]}"
    qrels = TrecQrels(LocalDownload(bench.qrels), {0: "not", 1: "relevant", 2: "highly"})
    ir_datasets.registry.register(name, Dataset(qrels, TsvQueries(LocalDownload(bench.queries))))
    return name
