"""LARA: LLM confidence with budgeted, online-calibrated escalation to humans.

One yes/no call per pair gives P(yes) = p(yes) / (p(yes) + p(no)) from the first generated
token's top alternatives. The batch step then sends to humans, one at a time, the pair whose
calibrated probability is closest to 0.5, refitting a logistic calibration
``sigmoid(a * logit(P) + b)`` after each human label, until the budget is spent; the other
pairs take the calibrated label. The calibration is a MAP fit with a Gaussian prior centred on
the identity (a=1, b=0), so it is defined from the first label on and is the identity before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from docket.errors import ConfigError, RequestRefusedError
from docket.llm.model import Model
from docket.llm.types import Completion
from docket.relevance import prompts
from docket.relevance.baselines import base_judgment, call_record, shared_for, system_for
from docket.relevance.options import JudgeOptions
from docket.relevance.parsing import parse_yes_no
from docket.relevance.types import Judgment, Pair

PROB_CLIP = 1e-4
_WORD = re.compile(r"[^a-z]")


def p_yes_from_logprobs(completion: Completion) -> float | None:
    """P(yes) from the alternatives at the answer token, case and space variants summed.

    The answer token is the first generated token that is ``yes`` or ``no`` (a chat model
    may open with markdown or a quote first); the first token when none is.

    Returns None when the completion carries no logprobs or neither yes nor no is among the
    answer token's alternatives.
    """
    if not completion.logprobs:
        return None
    first = next(
        (lp for lp in completion.logprobs if _WORD.sub("", lp.token.lower()) in ("yes", "no")),
        completion.logprobs[0],
    )
    alternatives = {first.token: first.logprob, **first.top}
    mass = {"yes": 0.0, "no": 0.0}
    for token, logprob in alternatives.items():
        word = _WORD.sub("", token.lower())
        if word in mass:
            mass[word] += math.exp(logprob)
    total = mass["yes"] + mass["no"]
    return mass["yes"] / total if total > 0 else None


def human_budget(budget: float, n_pairs: int) -> int:
    """Number of pairs a budget fraction buys (rounded half up, at most ``n_pairs``)."""
    return min(n_pairs, math.floor(budget * n_pairs + 0.5))


def logit(p: np.ndarray | Sequence[float]) -> np.ndarray:
    """Log-odds with probabilities clipped away from 0 and 1."""
    clipped = np.clip(np.asarray(p, dtype=float), PROB_CLIP, 1 - PROB_CLIP)
    return np.log(clipped / (1 - clipped))


def sigmoid(z: np.ndarray) -> np.ndarray:
    """Logistic function without overflow for large ``|z|``."""
    return 0.5 * (1.0 + np.tanh(0.5 * np.asarray(z, dtype=float)))


@dataclass(frozen=True)
class Calibration:
    """``sigmoid(a * x + b)`` on ``x = logit(P)``."""

    a: float = 1.0
    b: float = 0.0

    def predict(self, x: np.ndarray) -> np.ndarray:
        """Calibrated probabilities for log-odds ``x``."""
        return sigmoid(self.a * x + self.b)


def fit_calibration(x: np.ndarray, y: np.ndarray, prior: float = 1.0) -> Calibration:
    """MAP logistic regression of labels ``y`` on log-odds ``x`` by Newton's method.

    The Gaussian prior (precision ``prior``) centred on the identity keeps the fit finite
    with few or one-class labels; with no labels it returns the identity.
    """
    theta0 = np.array([1.0, 0.0])
    theta = theta0.copy()
    design = np.column_stack([x, np.ones_like(x)])
    for _ in range(50):
        p = sigmoid(design @ theta)
        gradient = design.T @ (p - y) + prior * (theta - theta0)
        hessian = design.T @ (design * (p * (1 - p))[:, None]) + prior * np.eye(2)
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return Calibration(a=float(theta[0]), b=float(theta[1]))


class LaraJudge:
    """One yes/no call per pair; ``finalize`` escalates the budgeted pairs nearest 0.5.

    Without logprobs from the provider, P(yes) falls back to the parsed text (1 or 0) and
    the judgment's config records ``p_source: "text"``.
    """

    method = "lara"
    batch_step = True  # finalize learns the thresholds and escalates

    def __init__(self, options: JudgeOptions, model: Model) -> None:
        self.options = options
        self.model = model

    async def judge(self, pair: Pair) -> Judgment:
        """Ask yes/no once and read P(yes); an unparsed reply escalates the pair."""
        request = prompts.lara_request(
            shared_for(pair),
            self.options.top_logprobs,
            self.options.temperature,
            seed=self.options.call_seed,
            system=system_for(self.options, pair),
        )
        parsed = await self.model.generate_parsed(request, parse_yes_no)
        if parsed.value is None:
            record = call_record(parsed, self.model.name, p_yes=None, **_turn(None))
            return base_judgment(pair, self.method, self.options, self.model, [record])
        p_yes = p_yes_from_logprobs(parsed.completions[-1])
        source = "logprobs" if p_yes is not None else "text"
        p_yes = float(parsed.value) if p_yes is None else p_yes
        record = call_record(
            parsed, self.model.name, p_yes=p_yes, p_source=source, **_turn(parsed.value, p_yes)
        )
        judgment = base_judgment(pair, self.method, self.options, self.model, [record])
        config = {**judgment.config, "p_yes": p_yes, "p_source": source}
        return replace(
            judgment, label=int(p_yes >= 0.5), decided_by="judge", confidence=p_yes, config=config
        )

    async def check_logprobs(self, pair: Pair) -> None:
        """Refuse a model that returns no log-probabilities, before any pair is judged.

        A provider that declares none is refused with no call; any other answers ``pair``'s
        own question once. The caller keeps that answer for the pair's own call (it runs
        this in a :func:`docket.llm.cache.journaled` block), so it is paid once.

        Raises:
            ConfigError: the model gives no log-probabilities (LARA would read none).
        """
        name = self.model.name
        if self.model.provider.supports_logprobs:
            request = prompts.lara_request(
                shared_for(pair), self.options.top_logprobs, self.options.temperature,
                seed=self.options.call_seed,
            )  # fmt: skip
            try:
                if (await self.model.generate(request)).logprobs:
                    return
            except RequestRefusedError as exc:  # e.g. OpenAI's reasoning models: HTTP 400
                raise _no_logprobs(
                    f"the server refused a request for them: {exc.message}"
                ) from None
        raise _no_logprobs(f"'{name}' returns none")

    def finalize(
        self, judgments: list[Judgment], most_escalations: int | None = None
    ) -> list[Judgment]:
        """Mark the budgeted pairs closest to 0.5 as escalated (no human labels yet).

        ``most_escalations`` bounds the pairs escalated in all (unparsed ones included).
        """
        return run_lara(judgments, self.options.lara_budget, oracle=None, most=most_escalations)


def _no_logprobs(why: str) -> ConfigError:
    return ConfigError(
        f"--method lara reads the answer's log-probabilities, and {why}",
        hint="use a server that returns logprobs (OpenAI's non-reasoning models, vLLM, "
        "llama.cpp), or another --method (single, majority, dream)",
    )


def _turn(answer: int | None, p_yes: float | None = None) -> dict[str, Any]:
    """LARA's call as a round-1 transcript turn (it cites no evidence)."""
    reasoning = (
        "" if p_yes is None else f"answered {'yes' if answer else 'no'}; P(yes) = {p_yes:.3f}"
    )
    return {
        "round": 1,
        "agent": "judge",
        "stance": None,
        "label": answer,
        "evidence": [],
        "evidence_text": [],
        "invalid_evidence": [],
        "reasoning": reasoning,
    }


def simulate_lara(
    judgments: Sequence[Judgment], gold: Mapping[tuple[str, str], int], budget: float
) -> list[Judgment]:
    """Run LARA's online procedure with ``gold`` answering for the humans."""
    return run_lara(judgments, budget, oracle=gold)


def run_lara(
    judgments: Sequence[Judgment],
    budget: float,
    oracle: Mapping[tuple[str, str], int] | None,
    most: int | None = None,
) -> list[Judgment]:
    """The online procedure; ``oracle`` None escalates the chosen pairs unanswered.

    Pairs whose reply could not be parsed always go to humans and spend the budget first.
    ``most`` bounds the pairs sent to humans in all (a spend cap); None: the budget alone.
    """
    p_raw = [j.config.get("p_yes") for j in judgments]
    x = logit([p if p is not None else 0.5 for p in p_raw])
    asked: dict[int, int | None] = {
        i: _ask(oracle, judgments[i]) for i, p in enumerate(p_raw) if p is None
    }
    calibration = Calibration()
    wanted = human_budget(budget, len(judgments))
    for _ in range((wanted if most is None else min(wanted, most)) - len(asked)):
        calibration = _refit(x, asked, p_raw)
        i = _closest_to_half(calibration.predict(x), asked, p_raw)
        if i is None:
            break
        asked[i] = _ask(oracle, judgments[i])
    calibration = _refit(x, asked, p_raw)
    probs = calibration.predict(x)
    return [_outcome(j, asked, i, float(probs[i]), calibration) for i, j in enumerate(judgments)]


def _ask(oracle: Mapping[tuple[str, str], int] | None, judgment: Judgment) -> int | None:
    return None if oracle is None else oracle.get((judgment.qid, judgment.docid))


def _refit(
    x: np.ndarray, asked: Mapping[int, int | None], p_raw: Sequence[float | None]
) -> Calibration:
    # Unparsed pairs have no P(yes): their human labels cannot inform the calibration.
    known = [(i, y) for i, y in asked.items() if y is not None and p_raw[i] is not None]
    if not known:
        return Calibration()
    idx = np.array([i for i, _ in known])
    return fit_calibration(x[idx], np.array([y for _, y in known], dtype=float))


def _closest_to_half(
    probs: np.ndarray, asked: Mapping[int, int | None], p_raw: Sequence[float | None]
) -> int | None:
    candidates = [i for i, p in enumerate(p_raw) if p is not None and i not in asked]
    if not candidates:
        return None
    # min() keeps the first of equally close pairs: the order of the input breaks ties.
    return min(candidates, key=lambda i: abs(probs[i] - 0.5))


def _outcome(
    judgment: Judgment, asked: Mapping[int, int | None], i: int, prob: float, cal: Calibration
) -> Judgment:
    config = {**judgment.config, "calibration": {"a": cal.a, "b": cal.b}}
    if i in asked:
        human = asked[i]
        decided_by = "escalated" if human is None else "human"
        return replace(judgment, label=human, decided_by=decided_by, config=config)
    return replace(
        judgment, label=int(prob >= 0.5), decided_by="judge", confidence=prob, config=config
    )
