"""The atomizer: SOP sections to atomic, orthogonal rules with an LLM.

For each section an LLM proposes candidate rules. Each candidate then goes through a
reflection step against the rules kept so far: is it atomic (exactly one constraint)?
does it overlap a kept rule? Non-atomic candidates are split into parts and each part
is reflected on again; overlapping ones are merged with the kept rule (and the merge is
reflected on again) or dropped when already covered; recursion stops at ``max_depth``,
where a candidate is kept with a note. A ``fmt`` candidate must carry a valid
declarative check over the catalogue; an invalid one is re-asked once, then the rule
becomes ``sim`` with a note. Unreadable replies are re-asked once; a section whose
proposals stay unreadable is skipped and counted, never filled with invented rules.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import ValidationError

from docket.adherence.authoring.options import (  # noqa: F401  (re-exported)
    AtomizeOptions,
    AtomizeReport,
    AtomizeResult,
    Progress,
)
from docket.adherence.authoring.prompts import (
    Candidate,
    Verdict,
    fix_check_prompt,
    parse_check,
    parse_rule_list,
    parse_verdict,
    propose_prompt,
    reflect_prompt,
    system_prompt,
)
from docket.adherence.authoring.sop import SopDocument, SopSection
from docket.adherence.checks.base import describe_validation_error
from docket.adherence.rules.model import Rule, RuleSet, Source
from docket.errors import ConfigError, ModelError, ParseError
from docket.fanout import bounded_map
from docket.llm import Message, Model, Request

log = logging.getLogger(__name__)


async def atomize(
    sop: SopDocument,
    model: Model,
    options: AtomizeOptions | None = None,
    progress: Progress | None = None,
) -> AtomizeResult:
    """Extract a rule set from ``sop`` with ``model`` (see the module docstring).

    The result may hold no rule (every section skipped); callers that need rules check
    ``result.ruleset.rules``, as ``docket rules extract`` does.
    """
    return await _Run(sop, model, options or AtomizeOptions(), progress).run()


def atomize_sync(
    sop: SopDocument, model: Model, options: AtomizeOptions | None = None
) -> AtomizeResult:
    """Blocking wrapper around :func:`atomize`."""
    return asyncio.run(atomize(sop, model, options))


@dataclass
class _Kept:
    candidate: Candidate
    order: int


class _Run:
    """One extraction: proposals per section, then sequential reflection."""

    def __init__(
        self, sop: SopDocument, model: Model, options: AtomizeOptions, progress: Progress | None
    ) -> None:
        self.sop, self.model, self.options = sop, model, options
        self._progress = progress or (lambda _line: None)
        self.report = AtomizeReport()
        self.kept: dict[str, _Kept] = {}
        self._next_key = 0
        self._system = system_prompt()

    async def run(self) -> AtomizeResult:
        sections = [s for s in self.sop.sections if s.text.strip()]
        self.report.sections = len(sections)
        done = 0

        def proposed(_index: int, candidates: list[Candidate]) -> None:
            nonlocal done
            done += 1
            self._progress(f"section {done}/{len(sections)} proposed: {len(candidates)} candidates")

        proposals = await bounded_map(
            sections, self._propose, limit=self.options.concurrency, on_done=proposed
        )
        total = sum(len(c) for c in proposals)
        for candidates in proposals:
            for candidate in candidates:
                self._progress(f"placing candidate {self.report.candidates + 1}/{total}")
                self.report.candidates += 1
                candidate = await self._ensure_check(candidate)
                if self.options.reflect:
                    await self._place(candidate, depth=0)
                else:
                    self._keep(candidate)
        return AtomizeResult(self._ruleset(), self.report)

    def _request(self, prompt: str) -> Request:
        self.report.llm_calls += 1
        return Request(
            messages=(Message("system", self._system), Message("user", prompt)),
            max_tokens=self.options.max_tokens,
            temperature=self.options.temperature,
            seed=self.options.seed,
        )

    async def _propose(self, section: SopSection) -> list[Candidate]:
        lines = (section.start_line, section.end_line)
        request = self._request(propose_prompt(section.path_text, self.sop.numbered(section)))
        try:
            parsed = await self.model.generate_parsed(
                request,
                lambda t: parse_rule_list(t, section.path_text, lines),
                timeout_s=self.options.timeout_s,
            )
        except ModelError as exc:  # one failed section is reported, not a crashed run
            return self._skip(section, exc.one_line())
        self.report.llm_calls += len(parsed.raw) - 1
        if not parsed.ok:
            return self._skip(section, f"unreadable reply ({parsed.error})")
        return parsed.value or []

    def _skip(self, section: SopSection, why: str) -> list[Candidate]:
        self.report.sections_skipped.append(section.path_text)
        self.report.skip_reasons.append(why)
        log.warning("skipped SOP section '%s': %s", section.path_text, why)
        return []

    async def _ensure_check(self, candidate: Candidate) -> Candidate:
        """Keep a fmt candidate only with a valid check: re-ask once, else downgrade to sim."""
        if candidate.tier != "fmt" or (error := spec_error(candidate)) is None:
            return candidate
        self.report.spec_reasks += 1
        try:
            reply = await self.model.generate(
                self._request(fix_check_prompt(candidate.text, candidate.scope, error)),
                timeout_s=self.options.timeout_s,
            )
            spec = parse_check(reply.text)
        except ParseError as exc:
            spec, error = None, f"unreadable fix ({exc})"
        except ModelError as exc:
            spec, error = None, f"no fix ({exc.one_line()})"
        if spec is not None:
            fixed = replace(candidate, check=spec)
            if (error := spec_error(fixed)) is None:
                return fixed
        self.report.downgraded += 1
        note = f"proposed as fmt without a valid check ({error}); checked by the sim model instead"
        return replace(candidate, tier="sim", check=None, note=_join(candidate.note, note))

    async def _reflect(self, candidate: Candidate) -> Verdict | None:
        kept = [(key, k.candidate) for key, k in self.kept.items()]
        lines = _section_lines(self.sop, candidate)
        request = self._request(reflect_prompt(candidate, kept))
        try:
            parsed = await self.model.generate_parsed(
                request,
                lambda t: parse_verdict(t, candidate, set(self.kept), lines),
                timeout_s=self.options.timeout_s,
            )
        except ModelError as exc:  # kept unreflected, with a note, like an unreadable reply
            log.warning("reflection on '%s' failed: %s", candidate.text, exc.one_line())
            return None
        self.report.llm_calls += len(parsed.raw) - 1
        return parsed.value

    async def _place(self, candidate: Candidate, depth: int) -> None:
        verdict = await self._reflect(candidate)
        if verdict is None:
            self.report.reflection_failures += 1
            self._keep(
                replace(
                    candidate,
                    note=_join(candidate.note, "reflection reply unreadable; not checked"),
                )
            )
        elif not verdict.atomic and len(verdict.parts) > 1:
            await self._split(candidate, verdict.parts, depth)
        elif verdict.overlaps is not None:
            await self._merge(candidate, verdict, depth)
        else:
            self._keep(candidate)

    def _keep_at_depth_bound(self, candidate: Candidate, why: str) -> None:
        self.report.depth_limited += 1
        self._keep(replace(candidate, note=_join(candidate.note, why)))

    async def _split(self, candidate: Candidate, parts: tuple[Candidate, ...], depth: int) -> None:
        if depth >= self.options.max_depth:
            self._keep_at_depth_bound(
                candidate, "not atomic, but the split depth bound was reached"
            )
            return
        self.report.decomposed += 1
        for part in parts:
            await self._place(await self._ensure_check(part), depth + 1)

    async def _merge(self, candidate: Candidate, verdict: Verdict, depth: int) -> None:
        key = verdict.overlaps or ""
        if verdict.merged is None:
            self.report.duplicates_dropped += 1
            log.info(
                "dropped '%s': covered by kept rule '%s'",
                candidate.text,
                self.kept[key].candidate.text,
            )
            return
        if depth >= self.options.max_depth:
            self._keep_at_depth_bound(candidate, "overlaps another rule; merge depth bound reached")
            return
        self.report.merged += 1
        old = self.kept.pop(key)
        merged = replace(
            verdict.merged, section=old.candidate.section, lines=_union(old.candidate, candidate)
        )
        await self._place(await self._ensure_check(merged), depth + 1)

    def _keep(self, candidate: Candidate) -> None:
        self._next_key += 1
        self.kept[f"K{self._next_key}"] = _Kept(candidate, self._next_key)

    def _ruleset(self) -> RuleSet:
        ordered = sorted(self.kept.values(), key=lambda k: (k.candidate.lines[0], k.order))
        rules = [to_rule(f"R{i}", k.candidate) for i, k in enumerate(ordered, start=1)]
        self.report.kept = len(rules)
        name = self.options.name or Path(self.sop.source).stem or "rules"
        return RuleSet(name=name, sop=Path(self.sop.source).name, rules=rules)


def spec_error(candidate: Candidate) -> str | None:
    """Why a fmt candidate's check is unusable, or None when it validates."""
    if candidate.check is None:
        return "no check given"
    try:
        to_rule("candidate", candidate)
    except ConfigError as exc:
        return exc.message.removeprefix("rule 'candidate': ")
    except ValidationError as exc:
        return describe_validation_error(exc)
    return None


def to_rule(rule_id: str, candidate: Candidate) -> Rule:
    """The rule for a kept candidate."""
    return Rule(
        id=rule_id,
        text=candidate.text,
        tier=candidate.tier,
        scope=candidate.scope,
        check=candidate.check if candidate.tier == "fmt" else None,
        source=Source(section=candidate.section, lines=candidate.lines),
        note=candidate.note,
    )


def _section_lines(sop: SopDocument, candidate: Candidate) -> tuple[int, int]:
    for section in sop.sections:
        if section.path_text == candidate.section:
            return section.start_line, section.end_line
    return candidate.lines


def _union(old: Candidate, new: Candidate) -> tuple[int, int]:
    if old.section != new.section:
        return old.lines
    return min(old.lines[0], new.lines[0]), max(old.lines[1], new.lines[1])


def _join(note: str | None, extra: str) -> str:
    return f"{note}; {extra}" if note else extra
