"""Hole simulation with a fake judge, and RAG alignment on hand-made data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from docket.agreement import balanced_accuracy
from docket.errors import InputError, UserError
from docket.holes.run import simulate_holes
from docket.holes.simulate import drop_judgments
from docket.ir.corpus import open_corpus
from docket.ir.formats import Run
from docket.ir.rag import rag_alignment, read_generation
from docket.jobs import JobSpec
from docket.relevance.types import Judgment, Pair

from .conftest import QRELS, QUERIES, RUNS

RUN_LIST = [Run(n, {q: tuple(d) for q, d in r.items()}) for n, r in RUNS.items()]


def _store(tmp_path: Path) -> dict:
    return {"spec": JobSpec.of(db=str(tmp_path / "docket.db"), cache="off")}


def test_drop_is_seeded_and_removes_empty_queries() -> None:
    kept, dropped = drop_judgments(QRELS, 0.4, seed=1)
    assert len(dropped) == 2
    assert drop_judgments(QRELS, 0.4, seed=1) == (kept, dropped)
    assert sum(len(d) for d in kept.values()) == 3
    for (qid, docid), grade in dropped.items():
        assert QRELS[qid][docid] == grade and docid not in kept.get(qid, {})
    everything, _ = drop_judgments(QRELS, 1.0)
    assert everything == {}
    with pytest.raises(UserError):
        drop_judgments(QRELS, 0.0)


def test_balanced_accuracy_by_hand() -> None:
    # relevant recall 2/3, irrelevant recall 1/2
    assert balanced_accuracy([1, 1, 1, 0, 0], [1, 1, 0, 0, 1]) == pytest.approx(7 / 12)


class GoldFlipJudge:
    """Answers the gold label, except for flipped docids and escalated ones."""

    method = "flip"

    def __init__(self, flip=(), escalate=()):
        self.flip, self.escalate, self.seen = set(flip), set(escalate), []

    async def judge(self, pair: Pair) -> Judgment:
        self.seen.append(pair.key)
        if pair.docid in self.escalate:
            return Judgment(pair.qid, pair.docid, self.method, None, "escalated", rounds=2)
        label = 1 - pair.label if pair.docid in self.flip else pair.label
        return Judgment(pair.qid, pair.docid, self.method, label, "consensus")

    def finalize(self, judgments):
        return judgments


def test_perfect_judge_restores_the_ranking(bench, tmp_path: Path) -> None:
    corpus = open_corpus(bench.corpus, bench.index)
    judge = GoldFlipJudge()
    report = simulate_holes(
        QRELS, RUN_LIST, QUERIES, corpus, fraction=0.6, seed=3, measure="P@3", judge=judge,
        **_store(tmp_path),
    ).report  # fmt: skip
    assert report.dropped == 3 == report.judged == len(judge.seen)
    assert report.kappa == pytest.approx(1.0)  # seed 3 drops d1 (1), d3 (2), d5 (0)
    assert report.balanced_accuracy == pytest.approx(1.0)
    assert report.scores["refilled"] == report.scores["full"]
    refilled = next(r for r in report.rankings if r.variant == "refilled")
    assert refilled.tau == pytest.approx(1.0) and refilled.changed == 0


def test_flipping_judge_lowers_agreement(bench, tmp_path: Path) -> None:
    corpus = open_corpus(bench.corpus, bench.index)
    # drop everything; d1 (grade 1) and d2 (grade 0) get flipped, d5 escalated
    judge = GoldFlipJudge(flip={"d1", "d2"}, escalate={"d5"})
    report = simulate_holes(
        QRELS, RUN_LIST, QUERIES, corpus, fraction=1.0, measure="P@3", judge=judge,
        **_store(tmp_path),
    ).report  # fmt: skip
    # judged: d1 1->0, d2 0->1, d3 1->1, d4 1->1 ; d5 escalated
    assert (report.dropped, report.judged, report.escalated) == (5, 4, 1)
    assert report.confusion == {"tp": 2, "fn": 1, "fp": 1, "tn": 0}
    assert report.balanced_accuracy == pytest.approx((2 / 3 + 0) / 2)
    # kappa: p_o = 0.5, p_e = 0.75 * 0.75 + 0.25 * 0.25 = 0.625 -> -1/3
    assert report.kappa == pytest.approx(-1 / 3)


def test_depth_restricts_the_candidates(bench, tmp_path: Path) -> None:
    corpus = open_corpus(bench.corpus, bench.index)
    judge = GoldFlipJudge()
    simulate_holes(
        QRELS, RUN_LIST, QUERIES, corpus, fraction=1.0, depth=1, judge=judge, **_store(tmp_path)
    )
    # the top-1 pool holds q1: d1, d7, d3 and q2: d4, d9, d5 -> judged ones: d1 d3 d4 d5
    assert sorted(judge.seen) == [("q1", "d1"), ("q1", "d3"), ("q2", "d4"), ("q2", "d5")]


def _generation(tmp_path: Path, rows: list[tuple[str, str, object]]) -> Path:
    path = tmp_path / "gen.jsonl"
    path.write_text(
        "".join(json.dumps({"system": s, "qid": q, "correct": c}) + "\n" for s, q, c in rows)
    )
    return path


def test_rag_alignment_by_hand(tmp_path: Path, bench) -> None:
    from docket.ir.formats import read_qrels

    answers = read_generation(
        _generation(
            tmp_path,
            [
                ("A", "q1", True),
                ("A", "q2", False),
                ("B", "q1", 0.2),
                ("B", "q2", 0.4),
                ("C", "q1", 1),
                ("C", "q2", 1),
                ("C", "q9", 1),  # q9 has no qrels: ignored
            ],
        )
    )
    before = rag_alignment(QRELS, RUN_LIST, answers, k=3, measure="P")
    # P@3: A 1/3, B 1/3, C 1/2 ; correctness: A 0.5, B 0.3, C 1.0
    assert before.retrieval == pytest.approx({"A": 1 / 3, "B": 1 / 3, "C": 0.5})
    assert before.generation == pytest.approx({"A": 0.5, "B": 0.3, "C": 1.0})
    # dx = (-1, -1, 2) / 18, dy = (-0.1, -0.3, 0.4): r = (1.2 / 18) / sqrt((1 / 54) * 0.26)
    assert before.pearson == pytest.approx((1.2 / 18) / ((1 / 54) * 0.26) ** 0.5)
    assert before.kendall == pytest.approx(2 / 6**0.5)  # tie A-B in x, both other pairs concordant
    # every (system, query) has a relevant doc in the top-3; correct for A/q1, C/q1, C/q2
    assert (before.pairs, before.agreement) == (6, pytest.approx(0.5))
    assert before.kappa == pytest.approx(0.0)  # hits are constant: p_e = p_o = 0.5
    after = rag_alignment(
        read_qrels(bench.completed), RUN_LIST, answers, k=3, measure="P", variant="completed"
    )
    assert after.retrieval["B"] == pytest.approx(2 / 3)


def test_rag_bad_inputs(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="gen.jsonl:1: field 'correct'"):
        read_generation(_generation(tmp_path, [("A", "q1", "yes")]))
    answers = {"Z": {"q1": 1.0}}
    with pytest.raises(UserError, match="no run matches"):
        rag_alignment(QRELS, RUN_LIST, answers)
