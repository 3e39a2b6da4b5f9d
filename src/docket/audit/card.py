"""A dataset card for completed qrels: provenance, cost and the label-quality certificate.

:func:`dataset_card` gathers what a reader of published qrels needs to trust them: which
models and prompts made the labels (with the prompt hash recorded on every judgment), the
method's options, the docket version, what the job spent, and the certificate
(:func:`docket.audit.report.certificate`). ``docket export --job J --card card.md`` writes
it as Markdown, with the same data as JSON beside it (``card.json``).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from docket.audit.draw import audit_labels
from docket.audit.ppi_report import PpiReport
from docket.audit.render import certificate_markdown
from docket.audit.report import Certificate, certificate
from docket.audit.samples import from_audit
from docket.audit.strata import check_job
from docket.audit.systems import evaluate_systems_ppi
from docket.holes.run import complete_qrels
from docket.ir.formats import Qrels, Run, write_atomically
from docket.jobs.guidance import job_guidance
from docket.relevance.prompts import PROMPT_VERSION
from docket.store.base import Store
from docket.store.spend import spend_of
from docket.store.tables import JudgmentRecord
from docket.version import __version__


@dataclass(frozen=True)
class DatasetCard:
    """Provenance, cost and certificate of one job's labels."""

    job: str
    provenance: dict[str, Any]
    cost: dict[str, float]
    certificate: Certificate
    qrels: str | None = None
    systems: PpiReport | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON data (what ``card.json`` holds)."""
        return {
            "job": self.job,
            "qrels": self.qrels,
            "provenance": self.provenance,
            "cost": self.cost,
            "certificate": self.certificate.as_dict(),
            "systems": self.systems.to_json() if self.systems is not None else None,
        }


def dataset_card(
    store: Store,
    job: str,
    *,
    confidence: float = 0.95,
    qrels: str | None = None,
    original: int | None = None,
    systems: PpiReport | None = None,
) -> DatasetCard:
    """The dataset card of ``job``'s labels (``qrels``: the file they were written to;
    ``systems``: the table of :func:`system_table`, when runs were given).

    Raises:
        ConfigError: no such job, or ``confidence`` outside (0, 1).
    """
    with store.read_session() as session:
        row = check_job(session, job)
        models = Counter(
            dict(
                session.execute(
                    select(JudgmentRecord.model, func.count())
                    .where(JudgmentRecord.job == job)
                    .group_by(JudgmentRecord.model)
                ).all()
            )
        )
        hashes = list(
            session.scalars(
                select(JudgmentRecord.prompt_hash).where(JudgmentRecord.job == job).distinct()
            )
        )
        cost = spend_of(session, job)
        provenance = {
            "method": row.method,
            "model": row.model,
            "models_by_judgment": dict(models),
            "prompt_version": PROMPT_VERSION,
            "prompt_hashes": sorted(hashes),
            "options": {k: v for k, v in (row.options or {}).items() if k != "instructions"},
            # the collection's own definition of relevance, when the job judged by it
            "instructions": (row.options or {}).get("instructions", ""),
            "input": row.source,
            "docket_version_judged": row.docket_version,
            "docket_version_exported": __version__,
            "created_at": row.created_at.isoformat() if row.created_at else None,
        }
    provenance["guidance"] = job_guidance(store, job)
    cert = certificate(store, job, confidence=confidence, original=original)
    return DatasetCard(job, provenance, dict(cost), cert, qrels, systems)


def card_markdown(card: DatasetCard) -> str:
    """The card as Markdown."""
    p = card.provenance
    options = ", ".join(f"{k}={v}" for k, v in sorted(p["options"].items())) or "defaults"
    models = ", ".join(f"{m} ({n} judgments)" for m, n in p["models_by_judgment"].items())
    cost = card.cost
    lines = [
        f"# Dataset card: job {card.job}",
        "",
        *([f"Qrels: `{card.qrels}`", ""] if card.qrels else []),
        "## Provenance",
        "",
        f"- method: {p['method']} ({options})",
        f"- model: {p['model']}; by judgment: {models or 'none'}",
        f"- prompt version {p['prompt_version']}, prompt hashes recorded: "
        f"{', '.join(p['prompt_hashes']) or 'none'}",
        f"- input: {p['input'] or 'not recorded'}",
        *_definition_lines(p),
        f"- docket {p['docket_version_judged']} (judged), {p['docket_version_exported']} (card)",
        "",
        "## Cost",
        "",
        f"- {int(cost.get('calls', 0))} model calls, {int(cost.get('tokens', 0))} tokens, "
        f"USD {cost.get('cost', 0.0):.4f}, {int(cost.get('escalations', 0))} escalations",
        "",
        certificate_markdown(card.certificate).rstrip("\n"),
    ]
    if card.systems is not None:
        lines += ["", *_systems_markdown(card.systems)]
    return "\n".join(lines) + "\n"


def _definition_lines(p: dict[str, Any]) -> list[str]:
    """Whose definition of relevance the labels follow: docket's, or the collection's."""
    guidance = p.get("guidance") or {}
    given = sum(bool(text) for text in guidance.values())
    lines = [f"- query guidance: {given} of {len(guidance)} queries judged with the "
             "collection's description of the query (texts in the JSON card)"] if guidance else []  # fmt: skip
    if p.get("instructions"):
        quoted = "\n".join(f"> {line}".rstrip() for line in p["instructions"].splitlines())
        lines += ["", "## The collection's definition of relevance", "", quoted, ""]
    else:
        lines.append("- definition of relevance: docket's (prompt version "
                     f"{p['prompt_version']})")  # fmt: skip
    return lines


def _systems_markdown(report: PpiReport) -> list[str]:
    level = f"{report.confidence:.0%}"
    lines = [
        "## Systems, with prediction-powered intervals",
        "",
        f"{report.human_labels} human labels of the audit, frame of {report.frame} automatic "
        f"labels, {level} intervals ({report.design} design).",
        "",
        "| system | measure | estimate | interval | LLM labels only | humans only |",
        "|---|---|---:|---|---:|---|",
    ]
    for s in report.systems:
        lines.append(
            f"| {s.system} | {s.measure} | {s.estimate:.4f} | [{s.ci_low:.4f}, {s.ci_high:.4f}] "
            f"| {s.naive:.4f} | [{s.human_only.ci_low:.4f}, {s.human_only.ci_high:.4f}] |"
        )
    supported = [p for p in report.pairs if p.significant]
    if supported:
        lines += ["", "Orders the intervals support (Holm):", ""]
        lines += [
            f"- {p.measure}: {p.a if p.difference > 0 else p.b} > "
            f"{p.b if p.difference > 0 else p.a} ({p.difference:+.4f})"
            for p in supported
        ]
    return lines


def system_table(
    store: Store,
    job: str,
    runs: list[Run],
    measures: list[str],
    *,
    original: Qrels | None = None,
    confidence: float = 0.95,
    rel_level: int = 1,
) -> PpiReport:
    """Every system under ``measures`` with prediction-powered intervals from the job's audit.

    The LLM labels are the completed qrels (original + the job's labels, reviewers'
    decisions applied); :func:`docket.audit.systems.evaluate_systems_ppi` puts the
    automatic label back on each audited pair, whose answer is the human sample.

    Raises:
        ConfigError, InputError: as :func:`~docket.audit.systems.evaluate_systems_ppi`.
    """
    llm = complete_qrels(store, job, original or {}, rel_level=rel_level).completed
    sample = from_audit(audit_labels(store, job), job)
    return evaluate_systems_ppi(
        runs, llm, sample, measures, alpha=1 - confidence, original=original or None
    )


def write_card(card: DatasetCard, path: Path) -> Path:
    """Write the card as Markdown at ``path`` and as JSON beside it (``.json``); return the
    JSON path."""
    write_atomically(path, [card_markdown(card)])
    beside = path.with_suffix(".json")
    write_atomically(beside, [json.dumps(card.as_dict(), indent=2) + "\n"])
    return beside
