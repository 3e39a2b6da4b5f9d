"""Rules and rule sets: the human-editable YAML format, validation on load, content versions.

A rule file looks like::

    name: dialogue-collection
    rules:
      - id: R1
        text: Each assistant turn has at most 120 words.
        tier: fmt
        scope: {kind: role, role: assistant}
        check: {checker: word_count, params: {max: 120}}
        source: {section: "2 Format > 2.1 Length", lines: [14, 15]}

``version`` is computed from the content (text, tier, scope, check) and never trusted
from the file; a ``version`` key in the file is ignored.
"""

from docket.adherence.rules.io import dump_rules, load_rules, rules_json_schema, schema_text
from docket.adherence.rules.model import (
    RULE_ID_PATTERN,
    TIERS,
    FmtSpec,
    Rule,
    RuleSet,
    RulesFileError,
    Source,
    Tier,
    content_hash,
)
from docket.adherence.rules.scope import Scope, ScopeKind, Target

__all__ = [
    "RULE_ID_PATTERN",
    "TIERS",
    "FmtSpec",
    "Rule",
    "RuleSet",
    "RulesFileError",
    "Scope",
    "ScopeKind",
    "Source",
    "Target",
    "Tier",
    "content_hash",
    "dump_rules",
    "load_rules",
    "rules_json_schema",
    "schema_text",
]
