"""Shared test data for the review tests."""

from __future__ import annotations

from typing import Any


def relevance_payload(
    query: str = "what is the boiling point of water",
    sentences: list[str] | None = None,
    gold: int | None = None,
) -> dict[str, Any]:
    """A DREAM escalation: A argues relevant citing S1, B irrelevant citing S2; no agreement."""
    sentences = sentences or [
        "Water boils at 100 degrees Celsius at sea level.",
        "The pot was made of copper.",
        "Altitude lowers the boiling point.",
    ]
    payload: dict[str, Any] = {
        "qid": "q1",
        "query": query,
        "docid": "d1",
        "text": " ".join(sentences),
        "sentences": sentences,
        "method": "dream",
        "transcript": [
            {
                "round": 1,
                "agent": "A",
                "stance": "relevant",
                "label": 1,
                "evidence": ["S1"],
                "reasoning": "S1 states the boiling point.",
                "parsed": True,
            },
            {
                "round": 1,
                "agent": "B",
                "stance": "irrelevant",
                "label": 0,
                "evidence": ["S2"],
                "reasoning": "S2 is about the pot.",
                "parsed": True,
            },
            {
                "round": 2,
                "agent": "A",
                "stance": "relevant",
                "label": 1,
                "evidence": ["S1", "S3"],
                "reasoning": "S3 adds the altitude caveat.",
                "parsed": True,
            },
            {
                "round": 2,
                "agent": "B",
                "stance": "irrelevant",
                "label": 0,
                "evidence": ["S2", "S9"],
                "reasoning": "Still about cookware.",
                "parsed": True,
            },
        ],
    }
    if gold is not None:
        payload["gold"] = gold
    return payload


def wound_payload(gold: int | None = None) -> dict[str, Any]:
    """A richer escalation (also used for the docs screenshot); S4 is cited by both sides."""
    sentences = [
        "Minor cuts usually heal within a week.",
        "Deeper cuts that need stitches can take three weeks or more to close.",
        "Our clinic is open Monday to Saturday from 8 am.",
        "Healing time depends on the wound's depth, location and the person's age.",
        "Call ahead to book an appointment.",
    ]
    turns = [
        (
            1,
            "A",
            "relevant",
            1,
            ["S2", "S4"],
            "S2 gives the healing time for deep cuts directly; S4 explains what it depends on.",
        ),
        (
            1,
            "B",
            "irrelevant",
            0,
            ["S3", "S5"],
            "The passage is a clinic advertisement: S3 and S5 are about opening hours and booking.",
        ),
        (
            2,
            "A",
            "relevant",
            1,
            ["S2"],
            "Even if the page advertises a clinic, S2 answers the question: about three weeks.",
        ),
        (
            2,
            "B",
            "irrelevant",
            0,
            ["S1", "S4"],
            "S1 is about minor cuts, not deep ones, and S4 gives no duration at all.",
        ),
    ]
    payload: dict[str, Any] = {
        "qid": "1042",
        "query": "how long does it take for a deep cut to heal",
        "docid": "msmarco_passage_17_4412",
        "text": " ".join(sentences),
        "sentences": sentences,
        "method": "dream",
        "transcript": [
            {
                "round": r,
                "agent": a,
                "stance": s,
                "label": label,
                "evidence": ev,
                "reasoning": why,
                "parsed": True,
            }
            for r, a, s, label, ev, why in turns
        ],
    }
    if gold is not None:
        payload["gold"] = gold
    return payload
