"""docket: trustworthy LLM-assisted annotation.

Relevance assessment by multi-agent debate (DREAM) with escalation to human reviewers,
and real-time requirement adherence checks for annotation programmes (RE-AD).
"""

from __future__ import annotations

from docket.adherence import Record, Rule, RuleSet, Submission, Verifier, load_rules
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
from docket.llm import Message, Model, Request
from docket.relevance import JudgeOptions, Judgment, Pair, build_judge, read_pairs
from docket.store import open_store
from docket.version import __version__

__all__ = [
    "ConfigError",
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
