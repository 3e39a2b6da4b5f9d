"""Real-time requirement adherence (RE-AD): SOP to atomic rules, tiered parallel checks.

``sop`` ingests an SOP, ``atomize`` turns it into rules, ``rules`` loads and validates rule
sets, ``checks`` is the deterministic ``fmt`` catalogue, ``verify`` checks submissions
against every rule in parallel, and ``api`` serves it over HTTP. See docs/adherence.md.
"""

from docket.adherence.record import Record, Turn, read_records
from docket.adherence.rules import FmtSpec, Rule, RuleSet, dump_rules, load_rules
from docket.adherence.verify.submission import Submission
from docket.adherence.verify.verdict import RuleResult, Verdict
from docket.adherence.verify.verifier import Verifier, VerifierConfig

__all__ = [
    "FmtSpec",
    "Record",
    "Rule",
    "RuleResult",
    "RuleSet",
    "Submission",
    "Turn",
    "Verdict",
    "Verifier",
    "VerifierConfig",
    "dump_rules",
    "load_rules",
    "read_records",
]
