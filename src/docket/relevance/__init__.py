"""Relevance assessment: DREAM (debate), single judge, majority vote and LARA baselines.

Build a judge with :func:`build_judge` from :class:`JudgeOptions`; judge pairs with
``await judge.judge(pair)`` and run ``judge.finalize(judgments)`` on the whole batch.
"""

from __future__ import annotations

from docket.relevance.baselines import MajorityJudge, SingleJudge
from docket.relevance.debate import DreamJudge
from docket.relevance.evaluate import (
    CurvePoint,
    EvalReport,
    evaluate_methods,
    plot_curves,
)
from docket.relevance.evidence import (
    number_sentences,
    parse_evidence_ids,
    split_sentences,
    validate_evidence,
)
from docket.relevance.factory import build_judge
from docket.relevance.lara import LaraJudge, p_yes_from_logprobs, simulate_lara
from docket.relevance.metrics import MethodMetrics, class_recalls, compute_metrics
from docket.relevance.options import METHODS, JudgeOptions
from docket.relevance.pairs_io import PairFile, PairList, read_labels, read_pairs, scan_pairs
from docket.relevance.prompts import PROMPT_HASH, PROMPT_VERSION
from docket.relevance.types import Judge, Judgment, Pair

__all__ = [
    "METHODS",
    "PROMPT_HASH",
    "PROMPT_VERSION",
    "CurvePoint",
    "DreamJudge",
    "EvalReport",
    "Judge",
    "JudgeOptions",
    "Judgment",
    "LaraJudge",
    "MajorityJudge",
    "MethodMetrics",
    "Pair",
    "PairFile",
    "PairList",
    "SingleJudge",
    "build_judge",
    "class_recalls",
    "compute_metrics",
    "evaluate_methods",
    "number_sentences",
    "p_yes_from_logprobs",
    "parse_evidence_ids",
    "plot_curves",
    "read_labels",
    "read_pairs",
    "scan_pairs",
    "simulate_lara",
    "split_sentences",
    "validate_evidence",
]
