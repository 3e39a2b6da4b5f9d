"""Scripted models for the relevance tests, all going through the real fake provider."""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from pathlib import Path

from docket.llm.fake import register_fake
from docket.llm.model import Model
from docket.llm.types import Completion, Request, TokenLogprob
from docket.relevance.evidence import split_sentences
from docket.relevance.prompts import neutralise
from docket.relevance.types import Pair

_names = itertools.count()
_WHO = re.compile(r"you are agent (\w) in a debate with .*? Round (\d+)\.", re.S)

PAIR = Pair(
    qid="q1",
    query="what is the boiling point of water",
    docid="d1",
    text="Water boils at 100 degrees Celsius at sea level. It freezes at 0 degrees. "
    "Mountains are high.",
    label=1,
)


def turn(label: str, evidence: str = "S1", reasoning: str = "because") -> str:
    """A well-formed agent reply (protocol 3: one JSON object)."""
    ids = [e.strip() for e in evidence.split(",") if e.strip() and e.strip() != "none"]
    return json.dumps({"label": label, "evidence": ids, "reasoning": reasoning})


def user_text(request: Request) -> str:
    """The first user message of a request: the shared block and the task."""
    return next(m.content for m in request.messages if m.role == "user")


def who(request: Request) -> tuple[str, int]:
    """(agent, round) of a debate request."""
    match = _WHO.search(user_text(request))
    assert match, "not a debate request"
    return match.group(1), int(match.group(2))


def is_reask(request: Request) -> bool:
    """True for the Model's one re-ask: the unread reply is in the chat, then a user turn."""
    return any(m.role == "assistant" for m in request.messages)


class Recorder:
    """A scripted model that records every request it answers."""

    def __init__(self, script: Callable[[Request], object]) -> None:
        self.requests: list[Request] = []
        self.script = script
        self.name = register_fake(f"rel-{next(_names)}", self._answer)
        self.model = Model(self.name)

    def _answer(self, request: Request):
        self.requests.append(request)
        return self.script(request)

    def prompts(self) -> list[str]:
        """The first user message of every request, in call order."""
        return [user_text(r) for r in self.requests]


def debate_model(replies: dict[tuple[str, int], str]) -> Recorder:
    """Agents answer from a table keyed by (agent, round)."""
    return Recorder(lambda request: replies[who(request)])


def load_dl21(path: Path) -> list[dict]:
    """The 80 TREC DL 2021 rows of the shared data."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def recorded_judge(rows: list[dict], judge: str) -> Recorder:
    """Answers every relevance prompt with the label ``judge`` recorded for that pair."""
    table = {
        (row["query"], neutralise(split_sentences(row["passage"])[0])): row["llm_labels"][judge]
        for row in rows
    }

    def script(request: Request) -> str:
        prompt = user_text(request)
        query = re.search(r"<query>\n(.*?)\n</query>", prompt, re.S).group(1)
        first = re.search(r"<chunk>\n\[S1\] (.*?)\n", prompt + "\n", re.S).group(1)
        label = table[(query, first)]
        if '"grade"' in prompt:
            return json.dumps({"grade": 3 if label else 0, "evidence": [], "reasoning": "recorded"})
        if "yes or no" in prompt:  # a recorded label is a certain answer: LARA reads logprobs
            answer, other = ("Yes", "No") if label else ("No", "Yes")
            top = {answer: 0.0, other: -30.0}
            return Completion(text=answer, logprobs=(TokenLogprob(answer, 0.0, top),))
        return turn("relevant" if label else "irrelevant", reasoning="recorded label")

    return Recorder(script)
