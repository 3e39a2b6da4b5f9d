"""The public surface is deliberate: every name in __all__ exists, and nothing else leaks."""

from __future__ import annotations

import docket

EXPECTED = {
    "ConfigError",
    "DocketError",
    "InputError",
    "JobSpec",
    "JudgeOptions",
    "Judgment",
    "Message",
    "MissingDependencyError",
    "Model",
    "ModelError",
    "ModelTimeoutError",
    "ModelUnavailableError",
    "Pair",
    "ParseError",
    "Record",
    "Request",
    "ReviewError",
    "Rule",
    "RuleSet",
    "StoreError",
    "Submission",
    "TransientModelError",
    "UserError",
    "Verifier",
    "__version__",
    "build_judge",
    "load_rules",
    "open_store",
    "read_pairs",
    "run_job",
}


def test_all_lists_exactly_the_public_names() -> None:
    assert set(docket.__all__) == EXPECTED


def test_every_public_name_resolves() -> None:
    for name in docket.__all__:
        assert getattr(docket, name) is not None, name


def test_errors_share_one_root() -> None:
    for name in docket.__all__:
        value = getattr(docket, name)
        if isinstance(value, type) and name.endswith("Error"):
            assert issubclass(value, docket.DocketError), name


def test_user_errors_carry_one_line_with_the_hint() -> None:
    error = docket.InputError("empty query", path="p.jsonl", line=3, field="query", hint="fill it")
    assert error.one_line() == "p.jsonl:3: field 'query': empty query (fill it)"
