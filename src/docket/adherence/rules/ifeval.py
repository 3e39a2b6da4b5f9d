"""IFEval's 25 instruction types as docket rules over the fixed checker catalogue.

IFEval (Zhou et al., 2023; github.com/google-research/google-research,
``instruction_following_eval``) checks model responses against verifiable instructions.
:func:`ifeval_rules` turns one of its instructions (an id such as
``length_constraints:number_words`` and its keyword arguments) into the docket rules that
express it, with the parameters that reproduce IFEval's counting choices. A response
follows the instruction when every one of those rules passes. Used by
``benchmarks/ifeval_parity.py`` to measure agreement with IFEval's published verdicts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from docket.adherence.rules.model import Rule
from docket.errors import ConfigError

Spec = tuple[str, dict[str, Any]]
_OPTIONS = ["My answer is yes.", "My answer is no.", "My answer is maybe."]


def _relation(kwargs: dict[str, Any], count: str, relation: str) -> dict[str, int]:
    """IFEval's ``less than n`` / ``at least n`` as docket bounds."""
    n = int(kwargs[count])
    return {"max": n - 1} if kwargs[relation] == "less than" else {"min": n}


def _case(case: str) -> list[Spec]:
    return [("letter_case", {"case": case}), ("response_language", {"language": "en"})]


_SPECS: dict[str, Callable[[dict[str, Any]], list[Spec]]] = {
    "change_case:capital_word_frequency": lambda k: [
        (
            "uppercase_word_count",
            {"min_letters": 1, **_relation(k, "capital_frequency", "capital_relation")},
        )
    ],
    "change_case:english_capital": lambda k: _case("upper"),
    "change_case:english_lowercase": lambda k: _case("lower"),
    "combination:repeat_prompt": lambda k: [
        ("starts_with", {"text": k["prompt_to_repeat"].strip(), "case_sensitive": False})
    ],
    "combination:two_responses": lambda k: [("separated_responses", {})],
    "detectable_content:number_placeholders": lambda k: [
        ("placeholders", {"min": k["num_placeholders"]})
    ],
    "detectable_content:postscript": lambda k: [
        ("postscript", {"marker": k["postscript_marker"], "line_start": False})
    ],
    "detectable_format:constrained_response": lambda k: [
        (
            "keywords_required",
            {"keywords": _OPTIONS, "mode": "any", "whole_word": False, "case_sensitive": True},
        )
    ],
    "detectable_format:json_format": lambda k: [("json_valid", {})],
    "detectable_format:multiple_sections": lambda k: [
        ("section_count", {"marker": k["section_spliter"].strip(), "min": k["num_sections"]})
    ],
    "detectable_format:number_bullet_lists": lambda k: [
        ("bullet_list", {"exact": k["num_bullets"], "markers": "*-", "space_after": False})
    ],
    "detectable_format:number_highlighted_sections": lambda k: [
        ("highlighted_sections", {"min": k["num_highlights"]})
    ],
    "detectable_format:title": lambda k: [("title", {})],
    "keywords:existence": lambda k: [
        ("keywords_required", {"keywords": k["keywords"], "whole_word": False})
    ],
    "keywords:forbidden_words": lambda k: [
        ("keywords_forbidden", {"keywords": k["forbidden_words"], "whole_word": True})
    ],
    "keywords:frequency": lambda k: [
        (
            "keyword_count",
            {"keyword": k["keyword"], "whole_word": False, **_relation(k, "frequency", "relation")},
        )
    ],
    "keywords:letter_frequency": lambda k: [
        ("letter_count", {"letter": k["letter"], **_relation(k, "let_frequency", "let_relation")})
    ],
    "language:response_language": lambda k: [("response_language", {"language": k["language"]})],
    "length_constraints:nth_paragraph_first_word": lambda k: [
        ("paragraph_count", {"exact": k["num_paragraphs"]}),
        (
            "paragraph_first_word",
            {"paragraph": k["nth_paragraph"], "word": k["first_word"], "punctuation": "ifeval"},
        ),
    ],
    "length_constraints:number_paragraphs": lambda k: [
        ("paragraph_count", {"exact": k["num_paragraphs"], "separator": "divider"})
    ],
    "length_constraints:number_sentences": lambda k: [
        ("sentence_count", _relation(k, "num_sentences", "relation"))
    ],
    "length_constraints:number_words": lambda k: [
        ("word_count", {"joined": "split", **_relation(k, "num_words", "relation")})
    ],
    "punctuation:no_comma": lambda k: [("punctuation_banned", {"chars": ","})],
    "startend:end_checker": lambda k: [
        (
            "ends_with",
            {"text": k["end_phrase"].strip(), "case_sensitive": False, "ignore_quotes": True},
        )
    ],
    "startend:quotation": lambda k: [("wrapped_in", {})],
}

IFEVAL_TYPES: tuple[str, ...] = tuple(sorted(_SPECS))
"""The 25 instruction ids of IFEval."""


def ifeval_rules(instruction_id: str, kwargs: dict[str, Any] | None = None) -> list[Rule]:
    """The docket rules (scope: the whole record) that together express one IFEval instruction.

    Raises:
        ConfigError: an instruction id IFEval does not define, or missing arguments.
    """
    spec = _SPECS.get(instruction_id)
    if spec is None:
        raise ConfigError(f"unknown IFEval instruction '{instruction_id}'")
    args = {key: value for key, value in (kwargs or {}).items() if value is not None}
    try:
        specs = spec(args)
    except KeyError as exc:
        raise ConfigError(f"IFEval instruction '{instruction_id}' needs argument {exc}") from exc
    return [
        Rule(
            id=f"{instruction_id.split(':')[1]}-{number}",
            text=instruction_id,
            tier="fmt",
            check={"checker": checker, "params": params},
        )
        for number, (checker, params) in enumerate(specs, start=1)
    ]
