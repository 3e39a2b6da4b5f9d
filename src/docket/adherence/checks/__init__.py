"""The fixed catalogue of deterministic (``fmt``) checkers.

Each checker is a small pure function with a pydantic parameter model, registered by
name in :data:`CATALOGUE`. Rules refer to checkers declaratively (``checker`` plus
``params``); model output is never run as code.
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

__all__ = [
    "CATALOGUE",
    "Bounds",
    "CheckOutcome",
    "Checker",
    "Params",
    "catalogue_text",
    "param_summary",
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
