"""The one check interface: deterministic code, one LLM call per rule, or one call for all.

A :class:`Check` claims the rules it can judge and starts checking them for a submission:
results known at once (fmt checks, cache hits, refusals) come back directly, the rest as
coroutines the verifier runs concurrently and streams as they finish. The verifier routes
each rule to the first check that claims it, so no tier name is tested outside the checks.
"""

from __future__ import annotations

from collections.abc import Coroutine, Sequence
from typing import Any, Protocol

from docket.adherence.rules import Rule
from docket.adherence.verify.submission import Submission
from docket.adherence.verify.verdict import RuleResult
from docket.errors import ConfigError

Pending = Coroutine[Any, Any, list[RuleResult]]
"""Results still to compute (one LLM call; one or more rules). A coroutine, not a task:
checks start in a worker thread and the verifier schedules it on the event loop."""

Started = tuple[list[RuleResult], list[Pending]]
"""What :meth:`Check.start` returns: results known now, and the pending ones."""


class Check(Protocol):
    """One way of checking rules (implementations: FmtCheck, AtomicCheck, HolisticCheck).

    Attributes:
        group: the name results are timed and counted under (``fmt``, ``sim``, ``sub`` or
            ``holistic``).
    """

    group: str

    def claims(self, rule: Rule) -> bool:
        """True when this check judges ``rule``."""
        ...

    def required_model(self) -> str | None:
        """The missing model's tier when this check cannot run, else None."""
        ...

    def start(self, rules: Sequence[Rule], submission: Submission) -> Started:
        """Begin checking ``rules`` (all claimed, all applicable) on ``submission``."""
        ...


def route(checks: Sequence[Check], rules: Sequence[Rule]) -> list[tuple[Check, list[Rule]]]:
    """Each rule goes to the first check that claims it; checks with no rule are left out."""
    routed: dict[int, list[Rule]] = {}
    for rule in rules:
        owner = next((i for i, check in enumerate(checks) if check.claims(rule)), None)
        if owner is None:
            raise ConfigError(f"no check judges rule '{rule.id}' (tier '{rule.tier}')")
        routed.setdefault(owner, []).append(rule)
    return [(checks[i], routed[i]) for i in sorted(routed)]


def require_models(checks: Sequence[Check], rules: Sequence[Rule]) -> None:
    """Refuse a configuration where a check that has rules lacks its model.

    Raises:
        ConfigError: naming the tier and the flag that sets its model.
    """
    for check, _ in route(checks, rules):
        tier = check.required_model()
        if tier is not None:
            raise ConfigError(
                f"no {tier} model is configured for the {check.group} rules",
                hint=f"pass --{tier}-model (e.g. openai-compatible:http://127.0.0.1:8000/v1#name)",
            )
