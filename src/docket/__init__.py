"""docket: trustworthy LLM-assisted annotation.

Relevance assessment by multi-agent debate (DREAM) with escalation to human reviewers,
and real-time requirement adherence checks for annotation programmes (RE-AD).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docket.errors import (
    ConfigError,
    DocketError,
    InputError,
    MissingDependencyError,
    ModelError,
    ModelTimeoutError,
    ModelUnavailableError,
    ParseError,
    ReviewError,
    StoreError,
    TransientModelError,
    UserError,
)
from docket.version import __version__

# The rest is imported on first use (PEP 562), so ``import docket`` and the command line
# start without the store, the models and the web kit.
_LAZY = {
    "Record": "docket.adherence",
    "Rule": "docket.adherence",
    "RuleSet": "docket.adherence",
    "Submission": "docket.adherence",
    "Verifier": "docket.adherence",
    "load_rules": "docket.adherence",
    "Message": "docket.llm",
    "Model": "docket.llm",
    "Request": "docket.llm",
    "JudgeOptions": "docket.relevance",
    "Judgment": "docket.relevance",
    "Pair": "docket.relevance",
    "build_judge": "docket.relevance",
    "read_pairs": "docket.relevance",
    "open_store": "docket.store",
    "JobSpec": "docket.jobs",
    "run_job": "docket.jobs",
}

if TYPE_CHECKING:
    from docket.adherence import Record, Rule, RuleSet, Submission, Verifier, load_rules
    from docket.jobs import JobSpec, run_job
    from docket.llm import Message, Model, Request
    from docket.relevance import JudgeOptions, Judgment, Pair, build_judge, read_pairs
    from docket.store import open_store


def __getattr__(name: str) -> Any:
    """Import a public name's module when the name is first used."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'docket' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "ConfigError",
    "JobSpec",
    "JudgeOptions",
    "Judgment",
    "Message",
    "Model",
    "Pair",
    "Record",
    "Request",
    "Rule",
    "RuleSet",
    "Submission",
    "Verifier",
    "build_judge",
    "load_rules",
    "open_store",
    "read_pairs",
    "run_job",
    "DocketError",
    "InputError",
    "MissingDependencyError",
    "ModelError",
    "ModelTimeoutError",
    "ModelUnavailableError",
    "ParseError",
    "ReviewError",
    "StoreError",
    "TransientModelError",
    "UserError",
    "__version__",
]
