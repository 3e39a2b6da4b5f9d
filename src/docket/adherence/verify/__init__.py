"""Verifying submissions against a rule set: one Check interface, routing, incremental checks.

``check`` defines the :class:`Check` protocol; ``fmt`` (deterministic code) and ``tiers``
(one LLM call per rule, or one for all rules) implement it; ``verifier`` routes rules to
checks and streams results; ``submission`` holds the incremental cache; ``verdict`` the
serialised results; ``service`` and ``history`` what the web API saves.
"""

from docket.adherence.verify.check import Check
from docket.adherence.verify.submission import Submission
from docket.adherence.verify.verdict import RuleResult, Verdict
from docket.adherence.verify.verifier import Verifier, VerifierConfig

__all__ = ["Check", "RuleResult", "Submission", "Verdict", "Verifier", "VerifierConfig"]
