"""docket: trustworthy LLM-assisted annotation.

Relevance assessment by multi-agent debate (DREAM) with escalation to human reviewers,
and real-time requirement adherence checks for annotation programmes (RE-AD).
"""

from __future__ import annotations

from docket.errors import (
    ConfigError,
    DocketError,
    InputError,
    MissingDependencyError,
    ModelError,
    ModelUnavailableError,
    ParseError,
    ReviewError,
    StoreError,
    TransientModelError,
    UserError,
)
from docket.version import __version__

__all__ = [
    "ConfigError",
    "DocketError",
    "InputError",
    "MissingDependencyError",
    "ModelError",
    "ModelUnavailableError",
    "ParseError",
    "ReviewError",
    "StoreError",
    "TransientModelError",
    "UserError",
    "__version__",
]
