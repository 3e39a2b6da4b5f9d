"""docket's judge in a real PyTerrier pipeline: retriever >> judge, then pt.Experiment
against the qrels the judge wrote (no network, no Java)."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pyterrier as pt
import pytest

from docket.jobs.pyterrier_judge import ADDED, DocketJudge
from docket.llm.fake import register_chat_fake
from docket.llm.types import Request

TOPICS = pd.DataFrame({"qid": ["1", "2"], "query": ["boiling point of water", "egg"]})
DOCS = {
    "a": "Water boils at 100 degrees Celsius at sea level.",
    "b": "Water is a liquid at room temperature.",
    "c": "Chickens lay an egg most days.",
    "d": "The moon orbits the earth.",
}
RANKING = {"1": ["a", "b", "d"], "2": ["d", "c"]}
RELEVANT = {("1", "a"), ("2", "c")}


class FixedRetriever(pt.Transformer):
    """A tiny in-memory retriever: the same ranked frame for the topics it is given."""

    def transform(self, topics: pd.DataFrame) -> pd.DataFrame:
        rows = [
            {"qid": q, "query": query, "docno": d, "text": DOCS[d], "rank": r, "score": 10.0 - r}
            for q, query in zip(topics["qid"], topics["query"], strict=True)
            for r, d in enumerate(RANKING[q])
        ]
        return pd.DataFrame(rows, columns=["qid", "query", "docno", "text", "rank", "score"])


def _assessor(calls: list[str]):  # type: ignore[no-untyped-def]
    def decide(request: Request) -> dict:
        user = next(m.content for m in request.messages if m.role == "user")
        text = re.search(r"<chunk>\n\[S1\] (.*?)\n", user).group(1)
        calls.append(text)
        relevant = text.startswith(("Water boils", "Chickens"))
        return {"label": "relevant" if relevant else "irrelevant", "evidence": ["S1"],
                "reasoning": "the first sentence decides"}  # fmt: skip

    return decide


def test_pipeline_adds_labels_and_its_qrels_rank_systems(tmp_path: Path) -> None:
    calls: list[str] = []
    model = register_chat_fake("pt-assessor", _assessor(calls))
    judge = DocketJudge(method="single", model=model, db=str(tmp_path / "pt.db"), cache="off")
    judged = (FixedRetriever() >> judge).transform(TOPICS)
    assert set(ADDED) <= set(judged.columns) and len(judged) == 5
    labels = {
        (q, d): label for q, d, label in zip(judged.qid, judged.docno, judged.label, strict=True)
    }
    assert {key for key, label in labels.items() if label == 1} == RELEVANT
    assert set(judged.decided_by) == {"judge"} and len(calls) == 5

    qrels = judge.qrels()
    assert set(map(tuple, qrels[qrels.label > 0][["qid", "docno"]].values)) == RELEVANT
    result = pt.Experiment([FixedRetriever()], TOPICS, qrels, eval_metrics=["P_1", "ndcg_cut_10"])
    # query 1 has its relevant document first, query 2 second: P@1 = 0.5
    assert result.loc[0, "P_1"] == pytest.approx(0.5)

    again = (FixedRetriever() >> judge).transform(TOPICS)  # the store has every pair
    assert len(calls) == 5 and list(again.label) == list(judged.label)
    assert judge.last_run is not None and judge.last_run.usage.calls == 0


def test_a_frame_without_text_is_refused_with_the_fix(tmp_path: Path) -> None:
    judge = DocketJudge(method="single", model="fake:echo", db=str(tmp_path / "pt.db"))
    frame = FixedRetriever().transform(TOPICS).drop(columns=["text"])
    with pytest.raises(Exception, match="missing text") as caught:
        judge.transform(frame)
    assert "get_text" in caught.value.hint  # type: ignore[attr-defined]


def test_judges_of_two_methods_keep_their_jobs_apart(tmp_path: Path) -> None:
    calls: list[str] = []
    model = register_chat_fake("pt-two-methods", _assessor(calls))
    db = str(tmp_path / "pt.db")
    single = DocketJudge(method="single", model=model, db=db, cache="off")
    dream = DocketJudge(method="dream", model=model, db=db, cache="off", rounds=1)
    assert single.job == f"pyterrier-single-{model.replace(':', '-')}"
    assert dream.job != single.job and dream.job.startswith("pyterrier-dream-")
    for judge in (single, dream):  # the second used to be refused: same job, other method
        assert len((FixedRetriever() >> judge).transform(TOPICS)) == 5


def test_qrels_after_a_restart_come_from_the_store(tmp_path: Path) -> None:
    calls: list[str] = []
    model = register_chat_fake("pt-restart", _assessor(calls))
    db = str(tmp_path / "pt.db")
    first = DocketJudge(method="single", model=model, db=db, cache="off")
    (FixedRetriever() >> first).transform(TOPICS)
    restarted = DocketJudge(method="single", model=model, db=db, cache="off")  # a new process
    qrels = restarted.qrels()
    assert set(map(tuple, qrels[qrels.label > 0][["qid", "docno"]].values)) == RELEVANT
    assert len(calls) == 5  # nothing judged again
    fresh = DocketJudge(method="single", model=model, db=str(tmp_path / "other.db"))
    with pytest.raises(Exception, match="nothing judged yet"):
        fresh.qrels()
