"""``docket jobs``: every job of a store, so a job can be found without remembering its name."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from docket.cli.common import id_column, out
from docket.config import load_settings
from docket.jobs.listing import JobSummary, list_jobs
from docket.store import open_store
from docket.store.base import display_url

app = typer.Typer()


@app.command()
def jobs(
    db: Annotated[str | None, typer.Option(help="store path or SQLAlchemy URL")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON, one object per job")] = False,
) -> None:
    """List every job in a store: method, model, pairs judged and escalated, review, spend.

    Per job also the pairs a server refused, the calls made and the dates it was created
    and last judged; ``--json`` gives every field.
    """
    settings = load_settings(db=db)
    found = list_jobs(open_store(settings.db, read_only=True))
    if as_json:
        typer.echo(json.dumps([job.to_json() for job in found], indent=2))
        return
    if not found:
        out.print(f"no jobs in {display_url(settings.db)} (start one with docket judge)")
        return
    out.print(jobs_table(found, display_url(settings.db)), crop=False)


def jobs_table(found: list[JobSummary], where: str) -> Table:
    """One row per job; names never fold, so they can be copied into ``--job``."""
    table = Table(title=Text(f"jobs in {where}"), box=box.SIMPLE_HEAD)
    id_column(table, "job", [job.name for job in found])
    table.add_column("method")
    table.add_column("model", overflow="fold")
    for heading in ("judged", "escalated", "failed", "reviewed", "calls", "cost"):
        table.add_column(heading, justify="right")
    table.add_column("created")
    table.add_column("last judged")
    for job in found:
        table.add_row(
            Text(job.name),
            job.method,
            Text(job.model),
            str(job.judged),
            str(job.escalated),
            str(job.failed),
            f"{job.reviewed}/{job.review_tasks}" if job.review_tasks else "-",
            str(job.calls),
            f"${job.cost:.2f}" if job.cost else "-",
            f"{job.created:%Y-%m-%d %H:%M}",
            f"{job.last_judged:%Y-%m-%d %H:%M}" if job.last_judged else "-",
        )
    return table
