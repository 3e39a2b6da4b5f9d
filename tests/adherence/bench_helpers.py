"""Shared pieces of the RE-AD-Eval tests: the example SOP files and scripted models.

The scripted judge fails a rule exactly when the checked data contains the marker
``violates-<rule id>``; the scripted generator writes such markers into the turn it is
asked to rewrite.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from docket.adherence.record import Record, read_records
from docket.adherence.rules import RuleSet, load_rules
from docket.llm import Model, Request, RetryPolicy
from docket.llm.fake import register_fake

ROOT = Path(__file__).resolve().parents[2]
SOP = ROOT / "examples" / "sop"
NO_RETRY = RetryPolicy(max_retries=0)


def example_rules() -> RuleSet:
    """The 20-rule example set (8 fmt, 5 sim, 7 sub)."""
    return load_rules(SOP / "rules.yaml")


def clean_seeds() -> list[Record]:
    """The example dialogues that break no rule."""
    lines = (SOP / "dialogues.jsonl").read_text(encoding="utf-8").splitlines()
    clean = {
        json.loads(line)["id"] for line in lines if not json.loads(line)["expected_violations"]
    }
    return [r for r in read_records(SOP / "dialogues.jsonl") if r.id in clean]


def write_seeds(path: Path, records: list[Record]) -> Path:
    """Records as JSONL."""
    path.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    return path


def marker(rule_id: str) -> str:
    """The text the scripted judge reads as a violation of ``rule_id``."""
    return f"violates-{rule_id}"


def _data(request: Request) -> str:
    return request.messages[-1].content.split("Rule to check:")[0]


def judge_reply(request: Request) -> str:
    """PASS, or FAIL when the data holds the asked rule's marker (sim or sub format)."""
    rule = re.search(r"Rule to check: \[([^\]]+)\]", request.prompt_text).group(1)  # type: ignore[union-attr]
    failed = marker(rule) in _data(request)
    if "REASONING:" in request.messages[-1].content:
        return f"REASONING: checked.\nVERDICT: {'FAIL' if failed else 'PASS'}"
    return f"FAIL: marker found\nQUOTE: {marker(rule)}" if failed else "PASS"


def rewrite_target(request: Request) -> tuple[str, str]:
    """(rule to break, turn index to answer) read from a rewrite request."""
    text = request.messages[1].content
    rule = re.search(r"Rule to break: \[([^\]]+)\]", text).group(1)  # type: ignore[union-attr]
    turn = re.search(r"Rewrite turn (\d+)", text)
    return rule, turn.group(1) if turn else "1"


def generator(extra: Callable[[Request, str], list[str]] | None = None) -> Callable[[Request], str]:
    """A generator breaking the asked rule; ``extra(request, rule)`` adds more rule markers."""

    def reply(request: Request) -> str:
        rule, turn = rewrite_target(request)
        markers = [marker(rule), *(extra(request, rule) if extra else [])]
        return f'<rewrite turn="{turn}">Sure, I can help: {" ".join(markers)} here.</rewrite>'

    return reply


def fake_model(name: str, script: Callable[[Request], str]) -> Model:
    """A scripted model reached through the provider registry, without retries."""
    return Model(register_fake(name, script), retry=NO_RETRY)
