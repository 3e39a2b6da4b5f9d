"""``docket show``: one judged pair's transcript, round by round, or as JSON."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from sqlalchemy import select

from docket.cli.common import out
from docket.cli.plan_print import show_job_bill
from docket.cli.transcript import transcript_json, transcript_view
from docket.config import load_settings
from docket.errors import ConfigError
from docket.runner.records import judgment_from_record, pair_from_record
from docket.store import open_store
from docket.store.base import display_url
from docket.store.tables import JudgmentRecord

app = typer.Typer()


@app.command()
def show(
    qid: Annotated[str | None, typer.Argument(help="query id of the pair")] = None,
    docid: Annotated[str | None, typer.Argument(help="document id of the pair")] = None,
    job: Annotated[
        str | None, typer.Option(help="job name (needed if several jobs hold it)")
    ] = None,
    db: Annotated[str | None, typer.Option(help="store path or SQLAlchemy URL")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="print JSON with the raw replies")
    ] = False,
) -> None:
    """Show how a judged pair was decided: every turn's label, evidence and reasoning.

    Without a pair, ``--job J`` shows the job's spend and the plans and pilots kept with it.
    """
    settings = load_settings(db=db)
    store = open_store(settings.db, read_only=True)
    if qid is None or docid is None:
        if job is None or qid is not None:
            raise ConfigError("give a pair (QID DOCID), or --job alone", hint="docket show --job J")
        show_job_bill(store, job, as_json)
        return
    with store.session() as session:
        stmt = select(JudgmentRecord).where(
            JudgmentRecord.qid == qid, JudgmentRecord.docid == docid
        )
        if job is not None:
            stmt = stmt.where(JudgmentRecord.job == job)
        records = list(session.scalars(stmt))
    if not records:
        where = f"job '{job}'" if job else display_url(settings.db)
        raise ConfigError(
            f"no judgment of pair {qid} / {docid} in {where}",
            hint="check the ids, or list pairs with `docket export --format jsonl`",
        )
    if len(records) > 1:
        jobs = ", ".join(sorted(r.job for r in records))
        raise ConfigError(f"pair {qid} / {docid} is in several jobs: {jobs}", hint="add --job")
    pair, judgment = pair_from_record(records[0]), judgment_from_record(records[0])
    if as_json:
        out.print_json(json.dumps({"job": records[0].job, **transcript_json(pair, judgment)}))
    else:
        out.print(transcript_view(pair, judgment))
