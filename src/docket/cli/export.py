"""``docket export``: TREC qrels or JSONL with provenance."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from docket.cli.common import out
from docket.cli.outputs import output_path
from docket.config import load_settings
from docket.errors import ConfigError
from docket.holes.run import complete_qrels
from docket.ir.formats import count_judgments, read_qrels, write_qrels
from docket.ir.job_export import (
    check_export_options,
    export_rows,
    jsonl_lines,
    qrels_lines,
    undecided_lines,
    write_atomically,
)
from docket.ir.provenance import LEVELS, write_provenance
from docket.store import open_store
from docket.store.claims import failed_pairs
from docket.store.tables import Job

app = typer.Typer()
_NO_JOB = "list the jobs with `docket jobs`, or run docket judge"


@app.command()
def export(
    job: Annotated[str, typer.Option(help="job name (see docket jobs)")],
    output: Annotated[
        Path | None,
        typer.Option(
            "--out", "-o", help="file to write ('-': standard output)", callback=output_path
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="qrels | jsonl")] = "qrels",
    labels: Annotated[
        str, typer.Option(help="judged | reviewed (human decisions win)")
    ] = "reviewed",
    grades: Annotated[
        str, typer.Option(help="keep (write grades 0-3 where known) | binary (0 or --rel-level)")
    ] = "keep",
    rel_level: Annotated[
        int, typer.Option(help="value written for a binary 'relevant' (TREC DL: 2)")
    ] = 1,
    undecided: Annotated[
        Path | None,
        typer.Option(
            help="also write escalated pairs still without a decision (qid TAB docid)",
            callback=output_path,
        ),
    ] = None,
    db: Annotated[str | None, typer.Option(help="store path or SQLAlchemy URL")] = None,
    completed: Annotated[
        str | None,
        typer.Option(
            help="write these original qrels (file or irds:) completed with the job's labels"
        ),
    ] = None,
    provenance: Annotated[
        Path | None,
        typer.Option(help="with --completed: also write provenance JSONL", callback=output_path),
    ] = None,
    level: Annotated[
        str, typer.Option(help="with --completed: original | automatic | reviewed")
    ] = "reviewed",
    card: Annotated[
        Path | None,
        typer.Option(
            help="also write a dataset card (Markdown, card.json beside it): provenance, "
            "cost and the label-quality certificate",
            callback=output_path,
        ),
    ] = None,
    confidence: Annotated[
        float, typer.Option(help="with --card: confidence of the certificate's intervals")
    ] = 0.95,
    runs: Annotated[
        list[Path] | None,
        typer.Option(help="with --card: system runs for a table with intervals (repeat)"),
    ] = None,
    measures: Annotated[
        str, typer.Option(help="with --runs: measures linear in the labels, comma-separated")
    ] = "P@10,DCG@10",
) -> None:
    """Export a job's labels as TREC qrels or JSONL with provenance, or completed qrels."""
    if output is None and card is None:
        raise ConfigError("pass --out FILE (the labels) or --card FILE (a dataset card), or both")
    if runs and card is None:
        raise ConfigError("--runs goes with --card (the card's table of systems)")
    if card is not None:
        _write_card(job, card, output, completed, confidence, db, runs or [], measures, rel_level)
    if output is None:
        return
    if completed is not None:
        _export_completed(job, output, completed, provenance, level, rel_level, db)
        return
    _export_labels(job, output, fmt, labels, grades, rel_level, undecided, db)


def _export_labels(
    job: str, output: Path, fmt: str, labels: str, grades: str, rel_level: int,
    undecided: Path | None, db: str | None,
) -> None:  # fmt: skip
    """The job's labels as qrels or JSONL; escalated pairs without a decision listed apart."""
    if fmt not in ("qrels", "jsonl") or labels not in ("judged", "reviewed"):
        raise ConfigError("--format must be qrels or jsonl and --labels judged or reviewed")
    check_export_options(grades, rel_level)
    store = open_store(load_settings(db=db).db, read_only=True)
    with store.session() as session:
        if session.get(Job, job) is None:
            raise ConfigError(f"no job named '{job}' in the store", hint=_NO_JOB)
    rows = export_rows(store, job, labels)  # type: ignore[arg-type]
    if fmt == "qrels":
        lines = qrels_lines(rows, grades, rel_level)  # type: ignore[arg-type]
    else:
        lines = jsonl_lines(rows, grades, rel_level)  # type: ignore[arg-type]
    count = write_atomically(output, lines)
    out.print(f"wrote {count} {fmt} lines to {output}", markup=False)
    waiting = sum(row.undecided for row in rows)
    what = "without a decision" if labels == "reviewed" else "(labels as judged)"
    if undecided is not None:
        write_atomically(undecided, undecided_lines(rows))
        out.print(f"{waiting} escalated pairs {what} written to {undecided}", markup=False)
    elif waiting and fmt == "qrels":
        out.print(
            f"{waiting} escalated pairs {what} are not in the qrels "
            "(list them with --undecided FILE)",
            markup=False,
        )
    with store.session() as session:
        if failed := failed_pairs(session, job):
            out.print(f"{len(failed)} failed pairs not exported (rerun judge with --retry-failed)")


def _export_completed(
    job: str, output: Path, qrels: str, provenance: Path | None, level: str, rel_level: int,
    db: str | None,
) -> None:  # fmt: skip
    """The original qrels plus the job's labels, as ``holes fill --out-qrels`` writes them."""
    if level not in LEVELS:
        raise ConfigError(f"--level must be one of {', '.join(LEVELS)}, not '{level}'")
    original = read_qrels(qrels)
    store = open_store(load_settings(db=db).db, read_only=True)
    with store.session() as session:
        if session.get(Job, job) is None:
            raise ConfigError(f"no job named '{job}' in the store", hint=_NO_JOB)
    result = complete_qrels(store, job, original, level=level, rel_level=rel_level)
    write_qrels(result.completed, output)
    if provenance is not None:
        write_provenance(result.records, provenance)
    before, after = count_judgments(original), count_judgments(result.completed)
    out.print(
        f"wrote {after} qrels lines to {output}: {before} original judgments and "
        f"{after - before} labels of job {job} at level {level}",
        markup=False,
    )


def _write_card(
    job: str, card: Path, output: Path | None, completed: str | None, confidence: float,
    db: str | None, runs: list[Path], measures: str, rel_level: int,
) -> None:  # fmt: skip
    """The dataset card of the job's labels, written before the labels (it checks the job)."""
    from docket.audit.card import dataset_card, system_table, write_card
    from docket.ir.formats import read_runs

    store = open_store(load_settings(db=db).db, read_only=True)
    original = read_qrels(completed) if completed is not None else None
    systems = None
    if runs:
        names = [m.strip() for m in measures.split(",") if m.strip()]
        systems = system_table(
            store, job, read_runs(runs), names, original=original, confidence=confidence,
            rel_level=rel_level,
        )  # fmt: skip
    made = dataset_card(
        store, job, confidence=confidence, qrels=str(output) if output else None,
        original=count_judgments(original) if original is not None else None, systems=systems,
    )  # fmt: skip
    beside = write_card(made, card)
    out.print(f"wrote the dataset card of job {job} to {card} and {beside}", markup=False)
