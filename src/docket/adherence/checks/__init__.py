"""The fixed catalogue of deterministic (``fmt``) checkers.

Each checker is a small pure function with a pydantic parameter model, registered by
name in :data:`CATALOGUE`. Rules refer to checkers declaratively (``checker`` plus
``params``); model output is never run as code. The patterns and counters the checkers
use (``WORD``, :func:`caps_words`, :func:`sentence_starts`, ...) are public too, so that
code which writes text for a checker (RE-AD-Eval's mutations) counts exactly as it does.
"""

from docket.adherence.checks import (  # noqa: F401  (registration)
    contacts,
    counts,
    dialogue,
    keywords,
    language,
    layout,
    structured,
    style,
)
from docket.adherence.checks.base import (
    CATALOGUE,
    Bounds,
    Checker,
    CheckOutcome,
    Params,
    param_summary,
    validate_params,
)
from docket.adherence.checks.contacts import EMAIL, URL, phone_numbers_in
from docket.adherence.checks.counts import WORD, caps_words, paragraph_spans, sentence_starts
from docket.adherence.checks.keywords import keyword_pattern
from docket.adherence.checks.style import HIGHLIGHT, NUMBERED, PLACEHOLDER, bullet_pattern

__all__ = [
    "CATALOGUE",
    "EMAIL",
    "HIGHLIGHT",
    "NUMBERED",
    "PLACEHOLDER",
    "URL",
    "WORD",
    "Bounds",
    "CheckOutcome",
    "Checker",
    "Params",
    "bullet_pattern",
    "caps_words",
    "catalogue_text",
    "keyword_pattern",
    "paragraph_spans",
    "param_summary",
    "phone_numbers_in",
    "sentence_starts",
    "validate_params",
]


def catalogue_text() -> str:
    """One line per checker: name, level, parameters and what it checks (for prompts and help)."""
    lines = []
    for name, found in sorted(CATALOGUE.items()):
        lines.append(
            f"- {name} [{found.level}] params: {param_summary(found.params)} -- {found.doc}"
        )
    return "\n".join(lines)
