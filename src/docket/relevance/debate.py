"""DREAM: relevance assessment by debate between agents with opposing starting stances.

Each round every agent reads the numbered chunk, its own previous turn and the others'
previous turns (label, reasoning and quoted evidence), answers the others' claims, and
replies with a label, evidence ids and one to three sentences of reasoning. The first
round in which all labels agree decides the pair (``consensus``). Every parsed turn after
round 1 records whether it engaged with the debate (:mod:`docket.relevance.engagement`). Without agreement after R rounds, or as soon as a turn cannot be
parsed, the pair is escalated to a human with the whole transcript; an optional LLM
adjudicator may decide disagreements instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from docket.llm.model import Model, Parsed
from docket.relevance import prompts
from docket.relevance.baselines import judgment_config
from docket.relevance.engagement import classify, engagement_counts
from docket.relevance.evidence import sentence_id, split_sentences, validate_evidence
from docket.relevance.options import JudgeOptions
from docket.relevance.pair_usage import failures_of, parsed_usage, sum_usage
from docket.relevance.parsing import TurnReply, parse_turn
from docket.relevance.types import DecidedBy, Judgment, Pair

ADJUDICATOR_NAME = "adjudicator"


@dataclass(frozen=True)
class Agent:
    """One debater: a name (``A``, ``B``, ...), a starting stance and its model."""

    name: str
    stance: str
    model: Model


def agent_stances(stances: str, agents: int) -> list[str]:
    """Starting stance per agent: ``opposing`` alternates relevant/irrelevant from A,
    ``swapped`` alternates from irrelevant, ``neutral`` gives none."""
    if stances == "neutral":
        return ["neutral"] * agents
    first, second = ("relevant", "irrelevant")
    if stances == "swapped":
        first, second = second, first
    return [first if i % 2 == 0 else second for i in range(agents)]


def agent_names(agents: int) -> list[str]:
    """``A``, ``B``, ``C``, ... for ``agents`` debaters."""
    return [chr(ord("A") + i) for i in range(agents)]


@dataclass(frozen=True)
class _Chunk:
    """What every prompt of one pair is built from."""

    sentences: list[str]
    shared: str
    system: str = prompts.SYSTEM


class DreamJudge:
    """The debate judge. Stateless across pairs, so pairs may be judged concurrently.

    Args:
        options: judge options (``rounds``, ``max_tokens``, ``temperature`` are used here).
        agents: the debaters, at least two.
        adjudicator: a model that decides disagreements, or None to escalate to a human.
        model_name: the main model's name, stored in each judgment.
    """

    method = "dream"
    batch_step = False  # finalize is the identity: the runner skips it

    def __init__(
        self,
        options: JudgeOptions,
        agents: Sequence[Agent],
        adjudicator: Model | None = None,
        model_name: str = "",
    ) -> None:
        self.options = options
        self.agents = tuple(agents)
        self.adjudicator = adjudicator
        self.model_name = model_name or self.agents[0].model.name
        self.wording = prompts.wording(options.instructions)

    async def judge(self, pair: Pair) -> Judgment:
        """Run the debate for one pair."""
        sentences = [prompts.neutralise(s) for s in split_sentences(pair.text)]
        shared = prompts.shared_block(pair.query, sentences, pair.guidance)
        chunk = _Chunk(sentences, shared, self.wording.system_for(pair.guidance))
        transcript: list[dict[str, Any]] = []
        previous: dict[str, dict[str, Any]] = {}
        for round_no in range(1, self.options.rounds + 1):
            turns = await asyncio.gather(
                *(self._turn(agent, round_no, chunk, previous) for agent in self.agents)
            )
            class_turns(turns, previous)
            transcript.extend(turns)
            if not all(turn["parsed"] for turn in turns):
                return self._judgment(pair, transcript, None, "escalated", round_no)
            labels = {turn["label"] for turn in turns}
            if len(labels) == 1:
                return self._judgment(pair, transcript, labels.pop(), "consensus", round_no)
            previous = {turn["agent"]: turn for turn in turns}
        return await self._disagreement(pair, chunk, transcript)

    def finalize(
        self, judgments: list[Judgment], most_escalations: int | None = None
    ) -> list[Judgment]:
        """Identity: DREAM decides each pair on its own."""
        return judgments

    async def _turn(
        self,
        agent: Agent,
        round_no: int,
        chunk: _Chunk,
        previous: Mapping[str, dict[str, Any]],
    ) -> dict[str, Any]:
        others = [a.name for a in self.agents if a.name != agent.name]
        request = prompts.debate_request(
            chunk.shared,
            agent.name,
            others,
            agent.stance,
            round_no,
            previous,
            chunk.sentences,
            self.options.max_tokens,
            self.options.temperature,
            seed=self.options.call_seed,
            system=chunk.system,
        )
        parsed = await agent.model.generate_parsed(request, parse_turn)
        return turn_record(round_no, agent.name, agent.stance, agent.model.name, parsed, chunk)

    async def _disagreement(
        self, pair: Pair, chunk: _Chunk, transcript: list[dict[str, Any]]
    ) -> Judgment:
        rounds = self.options.rounds
        if self.adjudicator is None:
            return self._judgment(pair, transcript, None, "escalated", rounds)
        request = prompts.adjudicator_request(
            chunk.shared,
            transcript,
            chunk.sentences,
            self.options.max_tokens,
            self.options.temperature,
            seed=self.options.call_seed,
            system=chunk.system,
        )
        parsed = await self.adjudicator.generate_parsed(request, parse_turn)
        record = turn_record(rounds, ADJUDICATOR_NAME, None, self.adjudicator.name, parsed, chunk)
        transcript.append(record)
        if not parsed.ok:
            return self._judgment(pair, transcript, None, "escalated", rounds)
        return self._judgment(pair, transcript, record["label"], "adjudicator", rounds)

    def _judgment(
        self,
        pair: Pair,
        transcript: list[dict[str, Any]],
        label: int | None,
        decided_by: DecidedBy,
        rounds: int,
    ) -> Judgment:
        return Judgment(
            qid=pair.qid,
            docid=pair.docid,
            method=self.method,
            label=label,
            decided_by=decided_by,
            rounds=rounds,
            transcript=tuple(transcript),
            usage={
                **sum_usage(turn["usage"] for turn in transcript),
                **engagement_counts(transcript),
            },
            model=self.model_name,
            prompt_hash=self.wording.prompt_hash(pair.guidance),
            config=judgment_config(self.options, pair),
            parse_failures=sum(turn["parse_failures"] for turn in transcript),
            invalid_evidence=sum(len(turn["invalid_evidence"]) for turn in transcript),
        )


def class_turns(turns: Sequence[dict[str, Any]], previous: Mapping[str, dict[str, Any]]) -> None:
    """Add ``engagement`` to each parsed turn that follows a previous turn of its agent."""
    for turn in turns:
        own = previous.get(turn["agent"])
        if own is not None and turn["parsed"]:
            others = [t for name, t in previous.items() if name != turn["agent"]]
            turn["engagement"] = classify(turn, own, others)


def turn_record(
    round_no: int,
    agent: str,
    stance: str | None,
    model_name: str,
    parsed: Parsed[TurnReply],
    chunk: _Chunk,
) -> dict[str, Any]:
    """One transcript entry; ``raw`` holds every reply (two when the turn was re-asked)."""
    reply = parsed.value
    valid, invalid = validate_evidence(reply.evidence if reply else (), len(chunk.sentences))
    return {
        "round": round_no,
        "agent": agent,
        "stance": stance,
        "model": model_name,
        "label": reply.label if reply else None,
        "evidence": [sentence_id(i) for i in valid],
        "evidence_text": [chunk.sentences[i - 1] for i in valid],
        "invalid_evidence": invalid,
        "reasoning": reply.reasoning if reply else "",
        "raw": list(parsed.raw),
        "parsed": parsed.ok,
        "error": parsed.error,
        "parse_failures": failures_of(parsed),
        "usage": parsed_usage(model_name, parsed),
    }
