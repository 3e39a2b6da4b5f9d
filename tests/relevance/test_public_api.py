"""The public surface of docket.relevance, as the lead's CLI and runner use it."""

from __future__ import annotations

import inspect

import docket.relevance as relevance
from docket.relevance import JudgeOptions, build_judge
from tests.relevance.relevance_fakes import Recorder, user_text


def test_all_names_exist_and_required_ones_are_there():
    assert all(hasattr(relevance, name) for name in relevance.__all__)
    required = {"JudgeOptions", "build_judge", "split_sentences", "read_pairs", "simulate_lara"}
    assert required <= set(relevance.__all__)
    assert list(inspect.signature(build_judge).parameters) == ["options", "get_model"]


def test_options_defaults_serialise_and_validate():
    options = JudgeOptions()
    assert options.record() == JudgeOptions(**options.record()).record()
    assert (options.method, options.rounds, options.stances, options.agents) == (
        "dream",
        2,
        "opposing",
        2,
    )
    assert (options.scale, options.samples, options.lara_budget) == ("binary", 5, 0.035)
    assert options.agent_models == [] and options.adjudicator is None


async def test_every_method_builds_a_judge_with_finalize():
    fake = Recorder(lambda r: "Yes" if "yes or no" in user_text(r) else "LABEL: relevant")
    for method in ("dream", "single", "lara", "majority"):
        judge = build_judge(JudgeOptions(method=method, samples=3), lambda name: fake.model)
        assert judge.method == method
        pair = relevance.Pair("q", "what is x", "d", "X is a letter.")
        judgment = await judge.judge(pair)
        assert judgment.method == method and judgment.model == fake.name
        assert judge.finalize([judgment])[0].qid == "q"
