"""``docket export``: TREC qrels or JSONL with provenance."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from docket.cli.common import out
from docket.config import load_settings
from docket.errors import ConfigError
from docket.store import open_store
from docket.store.claims import failed_pairs
from docket.store.export import export_rows, jsonl_lines, qrels_lines, write_atomically
from docket.store.tables import Job

app = typer.Typer()


@app.command()
def export(
    job: Annotated[str, typer.Option(help="job name (see the summary of docket judge)")],
    output: Annotated[Path, typer.Option("--out", "-o", help="file to write")],
    fmt: Annotated[str, typer.Option("--format", help="qrels | jsonl")] = "qrels",
    labels: Annotated[
        str, typer.Option(help="judged | reviewed (human decisions win)")
    ] = "reviewed",
    db: Annotated[str | None, typer.Option(help="store path or SQLAlchemy URL")] = None,
) -> None:
    """Export a job's labels as TREC qrels or JSONL with provenance."""
    if fmt not in ("qrels", "jsonl") or labels not in ("judged", "reviewed"):
        raise ConfigError("--format must be qrels or jsonl and --labels judged or reviewed")
    store = open_store(load_settings(db=db).db)
    with store.session() as session:
        if session.get(Job, job) is None:
            raise ConfigError(f"no job named '{job}' in the store", hint="run docket judge first")
    rows = export_rows(store, job, labels)  # type: ignore[arg-type]
    lines = qrels_lines(rows) if fmt == "qrels" else jsonl_lines(rows)
    count = write_atomically(output, lines)
    out.print(f"wrote {count} {fmt} lines to {output}")
    with store.session() as session:
        if failed := failed_pairs(session, job):
            out.print(f"{len(failed)} failed pairs not exported (rerun judge with --retry-failed)")
