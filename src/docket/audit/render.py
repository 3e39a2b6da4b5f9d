"""The certificate as Markdown (for a dataset card and ``docket audit report --markdown``)."""

from __future__ import annotations

import math

from docket.audit.proportions import Interval
from docket.audit.report import Certificate


def _pct(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{100 * value:.1f}%"


def interval_text(interval: Interval) -> str:
    """``91.2% [88.0%, 93.6%] (n=240, wilson)``."""
    return (
        f"{_pct(interval.estimate)} [{_pct(interval.low)}, {_pct(interval.high)}] "
        f"(n={interval.n}, {interval.method})"
    )


def certificate_markdown(cert: Certificate, heading: str = "##") -> str:
    """The certificate as Markdown sections under ``heading`` level."""
    level = int(100 * cert.confidence) if (100 * cert.confidence).is_integer() else None
    ci = f"{level}%" if level else f"{cert.confidence:g}"
    final = cert.final
    lines = [
        f"{heading} Label-quality certificate: job {cert.job} ({cert.method})",
        "",
        f"Every interval is a {ci} confidence interval; n is the number of human-answered "
        "pairs it rests on.",
        "",
        f"- Accuracy of the automatic labels: {interval_text(cert.automatic_accuracy)}",
        f"- Recall of relevant pairs (final labels): {interval_text(final.recall_relevant)}",
        f"- Recall of irrelevant pairs (final labels): {interval_text(final.recall_irrelevant)}",
        f"- Balanced accuracy (final labels): {interval_text(final.balanced_accuracy)}",
        f"- Share of truly relevant pairs: {interval_text(final.relevant_share)}",
        "",
        f"{heading}# Automatic labels by stratum",
        "",
        "| stratum | pairs | drawn | answered | correct | accuracy |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for s in cert.strata:
        lines.append(
            f"| {s.name} | {s.population} | {s.drawn} | {s.answered} | {s.correct} | "
            f"{interval_text(s.accuracy)} |"
        )
    lines += ["", f"{heading}# Labels by source", ""]
    lines += _sources(cert)
    lines += _reviewers(cert, heading)
    if cert.warnings:
        lines += ["", f"{heading}# Warnings", ""]
        lines += [f"- {warning}" for warning in cert.warnings]
    return "\n".join(lines) + "\n"


def _sources(cert: Certificate) -> list[str]:
    src = cert.sources
    lines = []
    if src.get("original") is not None:
        lines.append(f"- original qrels: {src['original']}")
    automatic = ", ".join(f"{name} {n}" for name, n in src["automatic"].items()) or "none"
    lines += [
        f"- automatic: {src['automatic_total']} ({automatic})",
        f"- human: {src['human_escalations']} escalations decided, "
        f"{src['human_audit']} audit pairs answered",
        f"- escalated without a decision: {src['undecided_escalations']}",
    ]
    return lines


def _reviewers(cert: Certificate, heading: str) -> list[str]:
    if not cert.reviewers:
        return []
    lines = ["", f"{heading}# Reviewers", ""]
    lines += [f"- {name}: {n} decisions" for name, n in cert.reviewers.items()]
    for a in cert.agreement:
        kappa = "undefined" if a.kappa is None else f"{a.kappa:.3f}"
        lines.append(f"- Cohen's kappa {a.first} / {a.second}: {kappa} (n={a.n})")
    return lines
