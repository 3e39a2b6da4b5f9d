"""Hand escalated judgments to the human review queue, with the whole debate."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from sqlalchemy.orm import Session

from docket.relevance.types import Judgment, Pair
from docket.store.base import Store


def review_payload(pair: Pair, judgment: Judgment) -> dict:
    """What a reviewer sees: query, numbered sentences and the debate transcript."""
    from docket.relevance import split_sentences

    return {
        "qid": pair.qid,
        "query": pair.query,
        "docid": pair.docid,
        "text": pair.text,
        "sentences": split_sentences(pair.text),
        "method": judgment.method,
        "gold": pair.label,
        "transcript": [review_turn(turn) for turn in judgment.transcript],
        # A single judgment (LARA) is escalated for low confidence: the page shows it.
        **({"p_yes": judgment.config["p_yes"]} if "p_yes" in judgment.config else {}),
        # The collection's own definition of relevance, when the job judged by it.
        **({"guidance": pair.guidance} if pair.guidance else {}),
        **(
            {"instructions": judgment.config["instructions"]}
            if judgment.config.get("instructions")
            else {}
        ),  # fmt: skip
    }


def review_turn(turn: dict) -> dict:
    """A transcript turn as the review payload takes it, without its usage accounting.

    Every method writes round-1 turns with an agent name; records stored by older
    versions (single-judge and LARA calls without them) get the same defaults, so their
    escalations queue too.
    """
    return {"round": 1, "agent": "judge", **{k: v for k, v in turn.items() if k != "usage"}}


def enqueue_escalations(
    store: Store, job: str, results: Iterable[tuple[Pair, Judgment]], required_reviews: int = 1
) -> int:
    """Create a review task for every escalated, undecided pair; return how many."""
    with store.session() as session:
        return queue_escalated(session, job, results, required_reviews)


def queue_escalated(
    session: Session, job: str, results: Iterable[tuple[Pair, Judgment]], required_reviews: int = 1
) -> int:
    """Queue the escalated pairs of ``results`` in the caller's transaction; return how many.

    The batch loop calls it in the transaction that saves the judgments, so an interrupted
    run leaves no escalated judgment without its review task. Idempotent: a pair already
    queued keeps its task.
    """
    from docket.review.queue import enqueue, relevance_key

    count = 0
    for pair, judgment in results:
        if judgment.decided_by != "escalated":
            continue
        enqueue(
            session,
            job=job,
            kind="relevance",
            item_key=relevance_key(pair.qid, pair.docid),
            payload=review_payload(pair, judgment),
            required_reviews=required_reviews,
        )
        count += 1
    return count


def queue_blind(
    session: Session, job: str, pair: Pair, judgment: Judgment, required_reviews: int = 1
) -> int:
    """Queue one pair as a blind task (query and chunk only) in the caller's transaction.

    The payload is the escalation payload without the transcript and the confidence, and
    the task is blind, so a reviewer cannot tell it from a blind escalation (the audit of
    automatic labels draws its pairs into the queue this way). Returns the task id;
    idempotent like :func:`queue_escalated`.
    """
    from docket.review.queue import enqueue, relevance_key

    hidden = replace(judgment, transcript=(), config={})
    task = enqueue(
        session,
        job=job,
        kind="relevance",
        item_key=relevance_key(pair.qid, pair.docid),
        payload=review_payload(pair, hidden),
        required_reviews=required_reviews,
        blind=True,
    )
    return task.id


def apply_human_decisions(
    store: Store, job: str, results: list[tuple[Pair, Judgment]]
) -> list[tuple[Pair, Judgment]]:
    """Replace escalated judgments by the reviewers' final labels where they exist.

    The stored judgment rows are not touched: "as judged" stays queryable, and the
    decisions themselves live append-only in the review tables.
    """
    from docket.review.queue import reviewed_labels

    with store.session() as session:
        outcomes = reviewed_labels(session, job=job)
    merged = []
    for pair, judgment in results:
        outcome = outcomes.get(pair.key)
        if outcome is not None:
            judgment = replace(
                judgment, label=outcome.label, grade=outcome.grade, decided_by="human"
            )
        merged.append((pair, judgment))
    return merged
