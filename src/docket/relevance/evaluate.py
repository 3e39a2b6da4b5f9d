"""Compare relevance methods on gold-labelled pairs, with escalation-vs-accuracy curves.

DREAM's curve varies the number of rounds R; LARA's varies the human budget. LARA is judged
once and its online procedure replayed per budget with gold (or supplied human decisions)
standing in for humans. Re-running DREAM for other R repeats the earlier rounds' calls;
give the models a response cache to make them free.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from docket.errors import InputError
from docket.frames import flat, frame
from docket.relevance.lara import simulate_lara
from docket.relevance.metrics import Key, MethodMetrics, compute_metrics, final_label
from docket.relevance.options import JudgeOptions
from docket.relevance.types import Judgment, Pair

DREAM_ROUNDS: tuple[int, ...] = (1, 2, 3)
LARA_BUDGETS: tuple[float, ...] = (0.0, 0.035, 0.125, 0.25, 0.5)


@dataclass(frozen=True)
class CurvePoint:
    """One setting of a method: its escalation rate and balanced accuracy."""

    method: str
    setting: str
    value: float
    escalation_rate: float
    balanced_accuracy: float | None


@dataclass
class EvalReport:
    """Metrics per method, curves for DREAM and LARA, and the judgments behind them."""

    pairs: int
    duplicates: int
    options: dict[str, Any]
    metrics: dict[str, MethodMetrics]
    curves: dict[str, list[CurvePoint]]
    judgments: dict[str, list[Judgment]] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        """Report as plain JSON (without the judgments)."""
        return {
            "pairs": self.pairs,
            "duplicates": self.duplicates,
            "options": self.options,
            "methods": {name: m.to_json() for name, m in self.metrics.items()},
            "curves": {
                name: [point.__dict__ for point in points] for name, points in self.curves.items()
            },
        }

    def to_pandas(self, curves: bool = False) -> Any:
        """One row per method with its metrics (nested figures as dotted columns), or with
        ``curves`` one row per point of the escalation-vs-accuracy curves.

        Raises:
            MissingDependencyError: pandas is not installed.
        """
        if curves:
            points = [point.__dict__ for each in self.curves.values() for point in each]
            return frame(points, [f.name for f in fields(CurvePoint)])
        rows = [{"method": name, **flat(m.to_json())} for name, m in self.metrics.items()]
        return frame(rows, list(dict.fromkeys(k for row in rows for k in row)) or ["method"])


JudgeAll = Callable[[JudgeOptions, str], list[Judgment]]
"""Judges every pair of an evaluation with these options and returns the judgments in the
order of the pairs, finalized. The tag names the run (``dream``, ``dream R=3``, ...):
:func:`docket.jobs.compare_methods` judges each in a job of its own."""


def gold_labels(pairs: Sequence[Pair]) -> dict[Key, int]:
    """Gold labels by (qid, docid); refuses a set without any."""
    gold = {pair.key: pair.label for pair in pairs if pair.label is not None}
    if not gold:
        raise InputError(
            "no gold labels",
            field="label",
            hint="evaluation needs a 'label' (0/1) or 'grade' on the pairs",
        )
    return gold


def evaluate_methods(
    pairs: Sequence[Pair],
    methods: Sequence[str],
    options: JudgeOptions,
    judge_all: JudgeAll,
    *,
    humans: Mapping[Key, int] | None = None,
    duplicates: int = 0,
    dream_rounds: Sequence[int] = DREAM_ROUNDS,
    lara_budgets: Sequence[float] = LARA_BUDGETS,
) -> EvalReport:
    """Judge ``pairs`` with each method and compare with their gold labels.

    Args:
        pairs: pairs with gold labels.
        methods: method names, e.g. ``["dream", "single", "lara", "majority"]``.
        options: shared options; ``method`` is replaced per method.
        judge_all: judges every pair with given options (see :data:`JudgeAll`).
        humans: decisions for escalated pairs; None lets gold stand in for humans.
        duplicates: duplicate lines dropped on reading, reported as is.
        dream_rounds: values of R for DREAM's curve (empty: no curve).
        lara_budgets: budgets for LARA's curve (empty: no curve).
    """
    grades = {pair.key: pair.grade for pair in pairs if pair.grade is not None}
    run = _Run(judge_all, gold_labels(pairs), grades, humans)
    report = EvalReport(len(pairs), duplicates, options.model_dump(mode="json"), {}, {})
    for method in methods:
        method_options = options.model_copy(update={"method": method})
        if method == "lara":
            judgments, curve = _lara(run, method_options, lara_budgets)
        elif method == "dream":
            judgments, curve = _dream(run, method_options, dream_rounds)
        else:
            judgments, curve = run.judge_all(method_options, method), []
        report.metrics[method] = compute_metrics(method, judgments, run.gold, humans, grades)
        report.judgments[method] = judgments
        if curve:
            report.curves[method] = curve
    return report


@dataclass(frozen=True)
class _Run:
    """What every method of one evaluation shares."""

    judge_all: JudgeAll
    gold: Mapping[Key, int]
    gold_grades: Mapping[Key, int]
    humans: Mapping[Key, int] | None

    def point(self, method: str, setting: str, value: float, judged: list[Judgment]) -> CurvePoint:
        metrics = compute_metrics(method, judged, self.gold, self.humans, self.gold_grades)
        return CurvePoint(
            method, setting, value, metrics.escalation_rate, metrics.balanced_accuracy
        )


def _lara(
    run: _Run, options: JudgeOptions, budgets: Sequence[float]
) -> tuple[list[Judgment], list[CurvePoint]]:
    # Judged once; the online procedure is replayed per budget from each pair's P(yes), so
    # the job's own batch step (which escalates without answers) does not change the replay.
    judged = run.judge_all(options, "lara")
    oracle = run.gold if run.humans is None else run.humans
    curve = [
        run.point("lara", f"budget={b:.1%}", b, simulate_lara(judged, oracle, b))
        for b in (sorted({*budgets, options.lara_budget}) if budgets else [])
    ]
    return simulate_lara(judged, oracle, options.lara_budget), curve


def _dream(
    run: _Run, options: JudgeOptions, rounds: Sequence[int]
) -> tuple[list[Judgment], list[CurvePoint]]:
    main = run.judge_all(options, "dream")
    curve = []
    for r in sorted({*rounds, options.rounds}) if rounds else []:
        other = options.model_copy(update={"rounds": r})
        judged = main if r == options.rounds else run.judge_all(other, f"dream R={r}")
        curve.append(run.point("dream", f"R={r}", r, judged))
    return main, curve


def pair_rows(
    report: EvalReport, pairs: Sequence[Pair], humans: Mapping[Key, int] | None = None
) -> Iterator[dict[str, Any]]:
    """One row per method and pair for error analysis: gold, the method's and final labels.

    ``answered_by`` is None for pairs the method decided, ``gold`` or ``reviewers`` for
    escalations that got an answer, and ``left out`` for those that did not.
    """
    by_key = {pair.key: pair for pair in pairs}
    gold = {key: pair.label for key, pair in by_key.items() if pair.label is not None}
    for method, judgments in report.judgments.items():
        for j in judgments:
            pair = by_key[(j.qid, j.docid)]
            final = final_label(j, humans, gold)
            yield {
                "method": method,
                "qid": j.qid,
                "docid": j.docid,
                "gold": pair.label,
                "gold_grade": pair.grade,
                "label": j.label if j.decided_by != "human" else None,
                "grade": j.grade,
                "decided_by": j.decided_by,
                "rounds": j.rounds,
                "final": final,
                "answered_by": _answered_by(j, final, humans),
                "correct": None if final is None or pair.label is None else final == pair.label,
                "parse_failures": j.parse_failures,
            }


def _answered_by(
    judgment: Judgment, final: int | None, humans: Mapping[Key, int] | None
) -> str | None:
    if not judgment.escalated:
        return None
    if final is None:
        return "left out"
    return "gold" if humans is None else "reviewers"
