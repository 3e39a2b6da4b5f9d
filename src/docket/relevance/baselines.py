"""Baselines: one LLM judge (binary or graded 0-3) and a majority of sampled votes."""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import replace
from typing import Any

from docket.llm.model import Model, Parsed
from docket.relevance import prompts
from docket.relevance.evidence import sentence_id, split_sentences, validate_evidence
from docket.relevance.options import JudgeOptions
from docket.relevance.pair_usage import failures_of, parsed_usage, sum_usage
from docket.relevance.parsing import GradeReply, TurnReply, parse_grade, parse_turn
from docket.relevance.types import Judgment, Pair

RELEVANT_GRADE = 2
"""Graded judgments count as relevant from this grade on (TREC DL binarisation)."""


def shared_for(pair: Pair) -> str:
    """The shared prompt block of ``pair`` (the same prefix DREAM uses)."""
    sentences = [prompts.neutralise(s) for s in split_sentences(pair.text)]
    return prompts.shared_block(pair.query, sentences, pair.guidance)


def judgment_config(options: JudgeOptions, pair: Pair) -> dict[str, Any]:
    """A judgment's ``config``: the options it was judged with, and its query's guidance."""
    config = options.record()
    if pair.guidance:
        config["guidance"] = pair.guidance
    return config


def system_for(options: JudgeOptions, pair: Pair) -> str:
    """The system message of ``pair`` under the job's instructions (docket's by default)."""
    return prompts.wording(options.instructions).system_for(pair.guidance)


def reply_fields(
    reply: TurnReply | GradeReply | None,
    pair: Pair,
    *,
    agent: str = "judge",
    label: int | None = None,
) -> dict[str, Any]:
    """The transcript fields of a parsed reply: label, evidence (valid and not) and reasoning.

    Every method's transcript turn has the shape of a debate turn in round 1, so the
    review queue and ``docket show`` read one format.
    """
    turn: dict[str, Any] = {"round": 1, "agent": agent, "stance": None}
    if reply is None:
        empty: dict[str, Any] = {"evidence": [], "evidence_text": [], "invalid_evidence": []}
        return {**turn, "label": None, **empty, "reasoning": ""}
    sentences = split_sentences(pair.text)
    valid, invalid = validate_evidence(reply.evidence, len(sentences))
    return {
        **turn,
        "label": reply.label if isinstance(reply, TurnReply) else label,
        "evidence": [sentence_id(i) for i in valid],
        "evidence_text": [sentences[i - 1] for i in valid],
        "invalid_evidence": invalid,
        "reasoning": reply.reasoning,
    }


def call_record(parsed: Parsed[Any], model_name: str, **fields: Any) -> dict[str, Any]:
    """A transcript entry for one structured call."""
    return {
        **fields,
        "model": model_name,
        "raw": list(parsed.raw),
        "parsed": parsed.ok,
        "error": parsed.error,
        "parse_failures": failures_of(parsed),
        "usage": parsed_usage(model_name, parsed),
    }


def base_judgment(
    pair: Pair, method: str, options: JudgeOptions, model: Model, transcript: list[dict[str, Any]]
) -> Judgment:
    """An escalated judgment carrying the transcript and its accounting; callers fill the label."""
    return Judgment(
        qid=pair.qid,
        docid=pair.docid,
        method=method,
        label=None,
        decided_by="escalated",
        transcript=tuple(transcript),
        usage=sum_usage(entry["usage"] for entry in transcript),
        model=model.name,
        prompt_hash=prompts.wording(options.instructions).prompt_hash(pair.guidance),
        config=judgment_config(options, pair),
        parse_failures=sum(entry["parse_failures"] for entry in transcript),
    )


class SingleJudge:
    """One call per pair: a binary label, or a 0-3 grade binarised at grade >= 2.

    An unparsed reply (after one re-ask) escalates the pair; it never becomes a label.
    """

    method = "single"
    batch_step = False  # finalize is the identity: the runner skips it

    def __init__(self, options: JudgeOptions, model: Model) -> None:
        self.options = options
        self.model = model

    async def judge(self, pair: Pair) -> Judgment:
        """Judge one pair with one call (two if the reply had to be re-asked)."""
        if self.options.scale == "graded":
            return await self._graded(pair)
        request = prompts.single_binary_request(
            shared_for(pair),
            self.options.max_tokens,
            self.options.temperature,
            seed=self.options.call_seed,
            system=system_for(self.options, pair),
        )
        parsed = await self.model.generate_parsed(request, parse_turn)
        reply = parsed.value
        record = call_record(parsed, self.model.name, **reply_fields(reply, pair))
        judgment = base_judgment(pair, self.method, self.options, self.model, [record])
        return replace(judgment, label=reply.label, decided_by="judge") if reply else judgment

    async def _graded(self, pair: Pair) -> Judgment:
        request = prompts.single_graded_request(
            shared_for(pair),
            self.options.max_tokens,
            self.options.temperature,
            seed=self.options.call_seed,
            system=system_for(self.options, pair),
            grades=prompts.wording(self.options.instructions).grades,
        )
        parsed = await self.model.generate_parsed(request, parse_grade)
        reply = parsed.value
        grade = reply.grade if reply else None
        label = None if grade is None else int(grade >= RELEVANT_GRADE)
        fields = reply_fields(reply, pair, label=label)
        record = call_record(parsed, self.model.name, grade=grade, **fields)
        judgment = base_judgment(pair, self.method, self.options, self.model, [record])
        if grade is None:
            return judgment
        return replace(
            judgment, label=int(grade >= RELEVANT_GRADE), grade=grade, decided_by="judge"
        )

    def finalize(
        self, judgments: list[Judgment], most_escalations: int | None = None
    ) -> list[Judgment]:
        """Identity."""
        return judgments


class MajorityJudge:
    """``samples`` votes at temperature > 0 with distinct seeds; the majority label wins.

    Unparsed votes do not vote. A tie (or no parsed vote) escalates the pair.
    ``confidence`` is the majority's share of the parsed votes.
    """

    method = "majority"
    batch_step = False  # finalize is the identity: the runner skips it

    def __init__(self, options: JudgeOptions, model: Model) -> None:
        self.options = options
        self.model = model

    async def judge(self, pair: Pair) -> Judgment:
        """Collect the votes concurrently and count them."""
        shared = shared_for(pair)
        votes = await asyncio.gather(
            *(self._vote(pair, shared, i) for i in range(self.options.samples))
        )
        judgment = base_judgment(pair, self.method, self.options, self.model, list(votes))
        counts = Counter(v["label"] for v in votes if v["label"] is not None)
        ranked = counts.most_common()
        if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
            return judgment
        label, count = ranked[0]
        return replace(judgment, label=label, decided_by="judge", confidence=count / counts.total())

    async def _vote(self, pair: Pair, shared: str, index: int) -> dict[str, Any]:
        request = replace(
            prompts.single_binary_request(
                shared,
                self.options.max_tokens,
                self.options.majority_temperature,
                system=system_for(self.options, pair),
            ),
            seed=self.options.seed + index,
        )
        parsed = await self.model.generate_parsed(request, parse_turn)
        fields = reply_fields(parsed.value, pair, agent=f"vote {index + 1}")
        return call_record(parsed, self.model.name, sample=index, seed=request.seed, **fields)

    def finalize(
        self, judgments: list[Judgment], most_escalations: int | None = None
    ) -> list[Judgment]:
        """Identity."""
        return judgments
