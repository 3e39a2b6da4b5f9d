"""Single judge (binary, graded), majority vote and LARA with scripted models."""

from __future__ import annotations

import math

import numpy as np
import pytest

from docket.llm.types import Completion, Request, TokenLogprob
from docket.relevance import JudgeOptions, Judgment, build_judge, prompts, simulate_lara
from docket.relevance.evidence import split_sentences
from docket.relevance.lara import fit_calibration, human_budget, logit, p_yes_from_logprobs
from docket.relevance.prompts import shared_block
from tests.relevance.relevance_fakes import PAIR, Recorder


def judge_with(recorder: Recorder, **options):
    return build_judge(JudgeOptions(**options), lambda name: recorder.model)


async def test_single_binary():
    fake = Recorder(lambda r: '{"label": "irrelevant", "evidence": [], "reasoning": "off topic"}')
    judgment = await judge_with(fake, method="single").judge(PAIR)
    assert (judgment.label, judgment.decided_by, judgment.grade) == (0, "judge", None)
    assert judgment.transcript[0]["reasoning"] == "off topic"
    assert judgment.transcript[0]["round"] == 1 and judgment.transcript[0]["agent"] == "judge"
    assert judgment.usage["calls"] == 1 and judgment.method == "single"
    request = fake.requests[0]
    assert [m.role for m in request.messages] == ["system", "user"]  # no prefill
    assert request.messages[0].content == prompts.SYSTEM
    assert fake.prompts()[0].startswith(shared_block(PAIR.query, split_sentences(PAIR.text)))
    assert request.json_schema == prompts.LABEL_SCHEMA
    assert request.max_tokens == 200 and request.temperature == 0


@pytest.mark.parametrize(
    ("reply", "grade", "label"),
    [
        ('{"grade": 2, "evidence": ["S1"], "reasoning": "some answer"}', 2, 1),
        ('```json\n{"grade": 3, "evidence": [], "reasoning": "exact"}\n```', 3, 1),
        ('Here it is: {"grade": 1, "reasoning": "related only"}', 1, 0),
        ('{"grade": 0, "evidence": [], "reasoning": "nothing"}', 0, 0),
        ("M: 2\nT: 2\n##final score: 2", 2, 1),  # a model that ignores the JSON format
    ],
)
async def test_single_graded_binarised_at_two(reply, grade, label):
    fake = Recorder(lambda r: reply)
    judgment = await judge_with(fake, method="single", scale="graded").judge(PAIR)
    assert (judgment.grade, judgment.label, judgment.decided_by) == (grade, label, "judge")
    prompt = fake.prompts()[0]
    assert prompt.startswith(shared_block(PAIR.query, split_sentences(PAIR.text)))
    assert "0 to 3" in prompt and "Grades 2 and 3 mean relevant" in prompt
    assert fake.requests[0].json_schema == prompts.GRADE_SCHEMA
    assert judgment.transcript[0]["grade"] == grade and judgment.transcript[0]["label"] == label


async def test_single_unparsed_escalates():
    fake = Recorder(lambda r: "I would say it is fairly relevant overall")
    judgment = await judge_with(fake, method="single").judge(PAIR)
    assert judgment.label is None and judgment.decided_by == "escalated"
    assert judgment.parse_failures == 2 and len(fake.requests) == 2
    reask = fake.requests[1].messages
    assert [m.role for m in reask] == ["system", "user", "assistant", "user"]
    assert "could not be read" in reask[-1].content
    graded = await judge_with(
        Recorder(lambda r: '{"grade": 5}'), method="single", scale="graded"
    ).judge(PAIR)
    assert graded.label is None and graded.grade is None and graded.decided_by == "escalated"


async def test_majority_votes_with_distinct_seeds():
    fake = Recorder(
        lambda r: f"LABEL: {'relevant' if r.seed in (0, 2, 4) else 'irrelevant'}\nREASON: seed"
    )
    judgment = await judge_with(fake, method="majority", samples=5).judge(PAIR)
    assert (judgment.label, judgment.decided_by) == (1, "judge")
    assert judgment.confidence == pytest.approx(0.6)
    assert sorted(r.seed for r in fake.requests) == [0, 1, 2, 3, 4]
    assert all(r.temperature == 0.7 for r in fake.requests)
    assert len({r.cache_key("m") for r in fake.requests}) == 5
    assert judgment.usage["calls"] == 5 and len(judgment.transcript) == 5


async def test_majority_tie_escalates_and_unparsed_votes_do_not_count():
    tie = Recorder(lambda r: f"LABEL: {'relevant' if r.seed % 2 else 'irrelevant'}\nREASON: seed")
    judgment = await judge_with(tie, method="majority", samples=4).judge(PAIR)
    assert judgment.label is None and judgment.decided_by == "escalated"

    def script(r: Request) -> str:
        return {0: "LABEL: relevant\nREASON: r", 1: "LABEL: irrelevant\nREASON: r"}.get(
            r.seed, "no idea"
        )

    judgment = await judge_with(Recorder(script), method="majority", samples=3).judge(PAIR)
    assert judgment.label is None and judgment.parse_failures == 2  # 1-1 plus one unparsed
    two_to_one = Recorder(lambda r: "LABEL: irrelevant\nREASON: r" if r.seed < 2 else "garbage")
    judgment = await judge_with(two_to_one, method="majority", samples=3).judge(PAIR)
    assert (judgment.label, judgment.confidence) == (0, 1.0)


def logprob_reply(top: dict[str, float], text: str = "Yes") -> Completion:
    logs = {token: math.log(p) for token, p in top.items()}
    return Completion(text=text, logprobs=(TokenLogprob(text, logs.get(text, -9.0), logs),))


def test_p_yes_sums_case_and_space_variants():
    reply = logprob_reply({"Yes": 0.5, " yes": 0.1, "YES": 0.1, "No": 0.2, "Maybe": 0.1})
    assert p_yes_from_logprobs(reply) == pytest.approx(0.7 / 0.9)
    assert p_yes_from_logprobs(Completion(text="Yes")) is None
    assert p_yes_from_logprobs(logprob_reply({"Maybe": 0.9}, "Maybe")) is None


async def test_lara_judge_reads_logprobs_or_falls_back_to_text():
    fake = Recorder(lambda r: logprob_reply({"No": 0.3, " no": 0.1, "Yes": 0.4}))
    judgment = await judge_with(fake, method="lara").judge(PAIR)
    assert judgment.confidence == pytest.approx(0.5) and judgment.label == 1
    assert judgment.config["p_source"] == "logprobs" and fake.requests[0].top_logprobs == 10
    text_only = await judge_with(Recorder(lambda r: "No."), method="lara").judge(PAIR)
    assert (text_only.label, text_only.confidence) == (0, 0.0)
    assert text_only.config["p_source"] == "text"
    unparsed = await judge_with(Recorder(lambda r: "Perhaps"), method="lara").judge(PAIR)
    assert unparsed.label is None and unparsed.decided_by == "escalated"
    assert "p_yes" not in unparsed.config


def lara_judgments(ps: list[float]) -> list[Judgment]:
    return [
        Judgment("q", f"d{i}", "lara", int(p >= 0.5), "judge", confidence=p, config={"p_yes": p})
        for i, p in enumerate(ps)
    ]


def test_calibration_is_identity_without_labels_and_a_map_fit_with_them():
    assert human_budget(0.035, 80) == 3 and human_budget(0.5, 80) == 40 and human_budget(1, 3) == 3
    x = logit([0.9, 0.2, 0.6])
    y = np.array([1.0, 1.0, 0.0])
    cal = fit_calibration(x, y)
    theta = np.array([cal.a, cal.b])
    design = np.column_stack([x, np.ones(3)])
    p = 1 / (1 + np.exp(-(design @ theta)))
    # stationarity of the MAP objective with the identity prior (precision 1)
    assert design.T @ (p - y) + (theta - [1.0, 0.0]) == pytest.approx([0, 0], abs=1e-8)
    assert fit_calibration(x[:0], y[:0]).predict(x) == pytest.approx([0.9, 0.2, 0.6])


def test_finalize_escalates_the_budgeted_items_closest_to_half():
    ps = [0.95, 0.62, 0.48, 0.36, 0.05]
    judge = build_judge(JudgeOptions(method="lara", lara_budget=0.4), lambda name: None)
    out = judge.finalize(lara_judgments(ps))
    assert [j.decided_by for j in out] == ["judge", "escalated", "escalated", "judge", "judge"]
    assert [j.label for j in out] == [1, None, None, 0, 0]


def test_simulate_lara_refits_after_each_human_label():
    ps = [0.95, 0.62, 0.48, 0.36, 0.05]
    gold = {("q", f"d{i}"): g for i, g in enumerate([1, 0, 1, 1, 0])}
    one = simulate_lara(lara_judgments(ps), gold, 0.2)
    assert [j.decided_by for j in one] == ["judge", "judge", "human", "judge", "judge"]
    # the human said "relevant" at P=0.48: the calibration moves up, 0.36 now sits closest
    # to 0.5 (0.465 against 0.709 for P=0.62), so the second human label goes to it.
    assert one[3].confidence == pytest.approx(0.465, abs=1e-3)
    assert one[1].confidence == pytest.approx(0.709, abs=1e-3)
    two = simulate_lara(lara_judgments(ps), gold, 0.4)
    assert [j.decided_by for j in two] == ["judge", "judge", "human", "human", "judge"]
    assert [j.label for j in two] == [1, 1, 1, 1, 0]
    assert two[2].config["calibration"]["b"] > 0
    unparsed = [*lara_judgments(ps[:4]), Judgment("q", "d4", "lara", None, "escalated")]
    first = simulate_lara(unparsed, gold, 0.2)  # the unparsed pair spends the budget
    assert [j.decided_by for j in first] == ["judge"] * 4 + ["human"] and first[4].label == 0
