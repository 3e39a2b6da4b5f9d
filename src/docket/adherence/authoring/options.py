"""What an extraction run is given and what it reports: options, report, result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from docket.adherence.authoring.prompts import PROMPT_VERSION
from docket.adherence.rules.model import RuleSet


@dataclass(frozen=True)
class AtomizeOptions:
    """Settings of one extraction run.

    Attributes:
        max_depth: how many times a candidate may be split or merged in a chain.
        reflect: run the reflection step (off: keep every proposed candidate).
        temperature: sampling temperature of every call.
        seed: sampling seed (stability runs use one per run).
        max_tokens: generation cap per call (a reply that runs on, e.g. a small model
            echoing its prompt, is cut here and then fails to parse).
        timeout_s: seconds one call may take once it has a model slot; a section whose
            proposal call times out is skipped and reported.
        concurrency: sections proposed at once.
        name: rule set name (default: the SOP file's stem).
    """

    max_depth: int = 2
    reflect: bool = True
    temperature: float = 0.0
    seed: int | None = None
    max_tokens: int = 512
    timeout_s: float | None = 180.0
    concurrency: int = 4
    name: str | None = None


@dataclass
class AtomizeReport:
    """What happened during extraction (counts are over the whole run)."""

    sections: int = 0
    sections_skipped: list[str] = field(default_factory=list)
    skip_reasons: list[str] = field(default_factory=list)
    candidates: int = 0
    kept: int = 0
    decomposed: int = 0
    merged: int = 0
    duplicates_dropped: int = 0
    depth_limited: int = 0
    spec_reasks: int = 0
    downgraded: int = 0
    reflection_failures: int = 0
    llm_calls: int = 0
    prompt_version: str = PROMPT_VERSION

    def to_json(self) -> dict[str, Any]:
        """Plain data for JSON output."""
        return asdict(self)


@dataclass(frozen=True)
class AtomizeResult:
    """The extracted rule set and the report of how it was built."""

    ruleset: RuleSet
    report: AtomizeReport


Progress = Callable[[str], None]
"""Called with one line of progress (a section proposed, a candidate placed)."""
