"""Real-time requirement adherence (RE-AD): SOP to atomic rules, tiered parallel checks.

``record`` holds the submission data; ``checks`` is the deterministic ``fmt`` catalogue
(it imports nothing of rules); ``rules`` loads and validates rule sets; ``authoring``
ingests an SOP and turns it into rules (atomizer, stability); ``verify`` checks
submissions against every rule through one Check interface; ``web`` serves it
over HTTP. The RE-AD-Eval benchmark is :mod:`docket.readeval`. See docs/adherence.md.
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
