"""Shared by the plan, pilot and cap tests: their input file and a call-counting fake model."""

from __future__ import annotations

import json
from pathlib import Path

from docket.errors import TransientModelError
from docket.llm.types import Request

EXAMPLES = Path(__file__).resolve().parents[1] / "cli" / "pairs12.jsonl"
AGREE = json.dumps({"label": "relevant", "evidence": ["S1"], "reasoning": "on topic"})


class Counting:
    """Every agent says relevant (so debates agree); counts calls; fails every
    ``fail_every``-th call if set."""

    def __init__(self, fail_every: int = 0) -> None:
        self.calls = 0
        self.fail_every = fail_every

    def __call__(self, request: Request) -> str:
        self.calls += 1
        if self.fail_every and self.calls % self.fail_every == 0:
            raise TransientModelError("injected fault")
        return AGREE
