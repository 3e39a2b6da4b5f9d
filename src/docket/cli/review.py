"""``docket review``: the human review of escalated items (web app, reviewers, stats)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from docket.cli import web_flags
from docket.cli.outputs import output_path, to_stdout
from docket.config import load_settings
from docket.store.base import Store, open_store
from docket.writing import write_text

app = typer.Typer(
    help="Human review of escalated items: web app, reviewers, assignment, agreement.",
    no_args_is_help=True,
)

DbOption = Annotated[str | None, typer.Option("--db", help="store path or SQLAlchemy URL")]
JobOption = Annotated[str | None, typer.Option("--job", help="only this job")]


def _store(db: str | None) -> Store:
    return open_store(load_settings(db=db).db)


def _reading(db: str | None) -> Store:
    # Commands that only read refuse a missing store and read a read-only one.
    return open_store(load_settings(db=db).db, read_only=True)


def _print(text: str) -> None:
    typer.echo(text)


@app.command()
def serve(
    db: DbOption = None,
    host: Annotated[str, typer.Option(help="interface to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port")] = 8765,
    allowed_host: web_flags.AllowedHost = None,
    session_hours: web_flags.SessionHours = None,
    max_body_bytes: web_flags.MaxBody = None,
    max_json_depth: web_flags.MaxDepth = None,
    login_per_client: web_flags.PerClient = None,
    login_per_prefix: web_flags.PerPrefix = None,
    login_window: web_flags.Window = None,
    lockout_failures: web_flags.LockoutFailures = None,
    lockout_seconds: web_flags.LockoutSeconds = None,
    secure_cookies: web_flags.SecureCookies = False,
) -> None:
    """Start the review web app and print its address."""
    from docket.review.web import create_app
    from docket.web import WebSettings
    from docket.web.serve import serve

    settings = web_flags.web_settings(
        WebSettings(),
        host,
        allowed_host,
        session_hours=session_hours,
        max_body_bytes=max_body_bytes,
        max_json_depth=max_json_depth,
        login_per_client=login_per_client,
        login_per_prefix=login_per_prefix,
        login_window=login_window,
        lockout_failures=lockout_failures,
        lockout_seconds=lockout_seconds,
        secure_cookies=secure_cookies,
    )
    if settings.allowed_hosts is None:
        typer.secho("warning: listening on all interfaces; use HTTPS in front", err=True)
    application = create_app(_store(db), settings)
    serve(application, host, port, lambda url: _print(f"docket review: {url}/  (Ctrl-C to stop)"))


@app.command("add-reviewer")
def add_reviewer_command(
    name: str,
    db: DbOption = None,
    admin: Annotated[bool, typer.Option("--admin", help="may assign work and see stats")] = False,
    blind: Annotated[
        bool, typer.Option("--blind", help="never show this reviewer the debate")
    ] = False,
) -> None:
    """Create a reviewer and print their login token (shown only once)."""
    from docket.review.auth import add_reviewer

    store = _store(db)
    with store.session() as session:
        _, token = add_reviewer(session, name, admin=admin, blind=blind)
    _print(token)
    typer.secho(f"reviewer '{name}' added; keep the token: it is not stored", err=True)


@app.command("reset-token")
def reset_token_command(name: str, db: DbOption = None) -> None:
    """Give a reviewer a new login token (the old one and their sessions stop working)."""
    from docket.review.auth import reset_token

    with _store(db).session() as session:
        _print(reset_token(session, name))


@app.command("set-reviewer")
def set_reviewer_command(
    name: str,
    db: DbOption = None,
    admin: Annotated[bool | None, typer.Option("--admin/--no-admin")] = None,
    blind: Annotated[bool | None, typer.Option("--blind/--no-blind")] = None,
    active: Annotated[bool | None, typer.Option("--active/--inactive")] = None,
) -> None:
    """Change a reviewer's role, blind mode, or disable them."""
    from docket.review.auth import update_reviewer

    with _store(db).session() as session:
        r = update_reviewer(session, name, admin=admin, blind=blind, active=active)
        _print(f"{r.name}: admin={r.is_admin} blind={r.blind} active={r.active}")


@app.command()
def reviewers(db: DbOption = None) -> None:
    """List reviewers."""
    from sqlalchemy import select

    from docket.review.models import Reviewer

    table = Table("name", "role", "blind", "active")
    with _reading(db).read_session() as session:
        for r in session.scalars(select(Reviewer).order_by(Reviewer.name)):
            table.add_row(
                r.name, "admin" if r.is_admin else "reviewer", str(r.blind), str(r.active)
            )
    Console().print(table)


@app.command()
def assign(
    job: Annotated[str, typer.Option("--job", help="the job whose open tasks to assign")],
    reviewer: Annotated[list[str], typer.Option("--reviewer", "-r", help="repeatable")],
    db: DbOption = None,
    per_task: Annotated[int | None, typer.Option(help="reviewers per task (default: k)")] = None,
) -> None:
    """Spread a job's open tasks over reviewers, least-loaded first."""
    from docket.review.assign import assign_job

    with _store(db).session() as session:
        added = assign_job(session, job, reviewer, per_task=per_task, assigned_by="cli")
    _print(f"{added} new assignment(s)")


@app.command()
def blind(
    job: Annotated[str, typer.Option("--job", help="the job to split")],
    fraction: Annotated[float, typer.Option(help="share of undecided tasks to make blind")] = 0.5,
    seed: Annotated[int, typer.Option(help="random seed")] = 0,
    db: DbOption = None,
) -> None:
    """Hide the debate on a random share of a job's tasks, to measure its effect."""
    from docket.review.assign import mark_blind

    with _store(db).session() as session:
        count = mark_blind(session, job, fraction, seed=seed)
    _print(f"{count} task(s) blind")


@app.command()
def close(task_id: int, db: DbOption = None) -> None:
    """Close a task: it accepts no more decisions."""
    from docket.review.queue import close_task

    with _store(db).session() as session:
        _print(f"task {close_task(session, task_id).id} closed")


@app.command()
def stats(
    db: DbOption = None,
    job: JobOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """Tasks done and open, time per decision, agreement (Fleiss' kappa, Krippendorff's alpha)."""
    from docket.review.stats import review_stats

    with _reading(db).read_session() as session:
        data = review_stats(session, job=job)
    if as_json:
        _print(json.dumps(data, indent=2))
        return
    Console().print(_stats_table(data))


@app.command()
def tasks(
    db: DbOption = None,
    job: JobOption = None,
    status: Annotated[str, typer.Option(help="open | done | closed | all")] = "all",
    limit: Annotated[int | None, typer.Option(min=1, help="at most N tasks (first by id)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON lines")] = False,
) -> None:
    """List review tasks by id: job, item, status and reviews done / required."""
    from docket.review.tasks import list_tasks

    with _reading(db).read_session() as session:
        rows = list_tasks(session, job=job, status=status, limit=limit)
    if as_json:
        for row in rows:
            _print(json.dumps(row))
        return
    table = Table("id", "job", "item", "status", "reviews", title=f"{len(rows)} review tasks")
    for row in rows:
        item = row["title"] or row["item"]
        reviews = f"{row['reviews']}/{row['required_reviews']}"
        table.add_row(str(row["id"]), row["job"], item, row["status"], reviews)
    Console().print(table)


def _fmt(value: Any) -> str:
    return "–" if value is None else str(value)


def _stats_table(data: dict[str, Any]) -> Table:
    table = Table("statistic", "value", title="docket review")
    tasks, time = data["tasks"], data["time"]
    table.add_row(
        "tasks (open / done / closed)",
        f"{tasks['total']} ({tasks['open']} / {tasks['done']} / {tasks['closed']})",
    )
    table.add_row(
        "decisions (corrections)",
        f"{data['decisions']['total']} ({data['decisions']['corrections']})",
    )
    table.add_row(
        "seconds per decision (mean / median)",
        f"{_fmt(time['mean_seconds'])} / {_fmt(time['median_seconds'])}",
    )
    for name, a in data["agreement"].items():
        table.add_row(f"agreement {name}: tasks", str(a["n_tasks"]))
        table.add_row(
            f"agreement {name}: Fleiss' kappa / Krippendorff's alpha",
            f"{_fmt(a['fleiss_kappa'])} / {_fmt(a['krippendorff_alpha'])}",
        )
    for agent in data["agents"]:
        table.add_row(
            f"reviewers agree with agent {agent['agent']}",
            f"{_fmt(agent['agreement'])} (n={agent['n']})",
        )
    for name, g in data["gold"].items():
        table.add_row(
            f"vs gold, {name}: accuracy / balanced",
            f"{_fmt(g['accuracy'])} / {_fmt(g['balanced_accuracy'])} (n={g['n']})",
        )
    return table


@app.command("export-labelstudio")
def export_labelstudio_command(
    out: Annotated[Path, typer.Argument(help="JSON file to write", callback=output_path)],
    db: DbOption = None,
    job: JobOption = None,
    config: Annotated[
        Path | None,
        typer.Option(help="also write the labeling config XML here", callback=output_path),
    ] = None,
    annotators: Annotated[bool, typer.Option(help="name reviewers in completed_by.email")] = True,
) -> None:
    """Write tasks, decisions and the debate history as Label Studio task JSON."""
    from docket.review.labelstudio import LABEL_CONFIG, export_labelstudio

    with _reading(db).read_session() as session:
        tasks = export_labelstudio(session, job=job, annotators=annotators)
    write_text(out, json.dumps(tasks, ensure_ascii=False, indent=1) + "\n")
    if config is not None:
        write_text(config, LABEL_CONFIG)
    typer.echo(f"{len(tasks)} task(s) written to {out}", err=to_stdout(out, config))


@app.command("import-labelstudio")
def import_labelstudio_command(
    path: Annotated[Path, typer.Argument(help="Label Studio JSON export")],
    db: DbOption = None,
    job: Annotated[str | None, typer.Option(help="job for tasks that do not name one")] = None,
    reviewer: Annotated[
        str, typer.Option(help="reviewer for annotations without completed_by")
    ] = "labelstudio",
) -> None:
    """Enqueue Label Studio tasks and record their annotations as decisions."""
    from docket.review.labelstudio_import import import_labelstudio

    with _store(db).session() as session:
        report = import_labelstudio(session, path, job=job, reviewer=reviewer)
    refused = report.pop("refused")
    _print(", ".join(f"{k.replace('_', ' ')}: {v}" for k, v in report.items()))
    for message in refused:
        typer.secho(f"refused: {message}", err=True)
