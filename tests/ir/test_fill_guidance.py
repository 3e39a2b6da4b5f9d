"""Hole filling by the collection's definition of relevance: TREC topics' desc and narr."""

from __future__ import annotations

from pathlib import Path

from docket.holes import fill_holes
from docket.ir.queries import read_guidance, read_queries
from docket.jobs import JobSpec
from tests.ir.conftest import HOLE_LABELS, QUERIES, TableJudge

TOPICS = "".join(
    f"<top>\n<num> Number: {q}\n<title> {t}\n<desc> Description:\nWhat {t} asks.\n"
    f"<narr> Narrative:\nOnly diet of {q} counts.\n</top>\n"
    for q, t in QUERIES.items()
)


def test_topic_fields_become_guidance_beside_the_title_query(bench, tmp_path: Path) -> None:
    topics = tmp_path / "topics.txt"
    topics.write_text(TOPICS)
    assert read_queries(topics) == QUERIES
    guidance = read_guidance(topics, "desc,narr")
    assert guidance["q1"] == (
        "Description: What what do striped horses eat asks.\nNarrative: Only diet of q1 counts."
    )
    assert read_guidance(topics, "narr")["q2"] == "Narrative: Only diet of q2 counts."
    seen: list = []
    judge = TableJudge(HOLE_LABELS, seen=seen)
    filled = fill_holes(
        bench.qrels, bench.runs, topics, bench.corpus, JobSpec.of(db=str(tmp_path / "f.db")),
        depth=3, judge=judge, guidance_field="desc,narr", corpus_index=bench.index,
    )  # fmt: skip
    assert filled.complete and len(seen) == len(HOLE_LABELS)
    assert {p.qid: p.guidance for p in seen} == guidance
    assert {p.qid: p.query for p in seen} == QUERIES  # the query stays the title
