"""Every judge declares ``batch_step``; a judge written without it is completed once."""

from __future__ import annotations

import pickle

from docket.llm import Model
from docket.relevance import JudgeOptions, build_judge
from docket.relevance.types import JudgeAdapter, complete_judge


class _Old:
    """A judge written before ``batch_step`` was declared."""

    method = "old"

    def finalize(self, judgments, most_escalations=None):  # type: ignore[no-untyped-def]
        return judgments


def test_a_judge_without_batch_step_is_wrapped_with_the_default() -> None:
    judge = complete_judge(_Old())
    assert isinstance(judge, JudgeAdapter)
    assert judge.batch_step is True and judge.method == "old"
    assert judge.finalize([]) == []
    assert pickle.loads(pickle.dumps(judge)).method == "old"


def test_the_built_in_judges_declare_batch_step_and_are_not_wrapped() -> None:
    for method, step in (("single", False), ("majority", False), ("dream", False), ("lara", True)):
        judge = build_judge(JudgeOptions(method=method), lambda name: Model(name or "fake:echo"))
        assert complete_judge(judge) is judge
        assert judge.batch_step is step


def test_every_method_has_one_declaration() -> None:
    from docket.relevance import METHODS
    from docket.relevance.methods import METHOD_SPECS
    from docket.relevance.options import METHOD_FIELDS

    assert tuple(METHOD_SPECS) == METHODS
    options = JudgeOptions(agents=3, samples=5)
    per_round = {name: spec.calls_per_round(options) for name, spec in METHOD_SPECS.items()}
    assert per_round == {"dream": 3, "single": 1, "lara": 1, "majority": 5}
    assert {name: spec.fields for name, spec in METHOD_SPECS.items()} == METHOD_FIELDS
