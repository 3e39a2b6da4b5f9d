"""``docket verify``: check records against a rule set, feedback statistics, and the server.

``docket verify --rules rules.yaml data.jsonl`` is short for ``docket verify run ...``:
when the first word after ``verify`` is not a sub-command, ``run`` is meant.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from typer.core import TyperGroup

from docket.adherence.record import Record
from docket.adherence.verify import Submission, Verifier
from docket.adherence.verify.verdict import Verdict
from docket.cli import web_flags
from docket.cli.common import EXIT_FAILED, console, escape, out
from docket.cli.outputs import output_path
from docket.cli.verify_labelstudio import TokenFileOpt, labelstudio
from docket.cli.verify_options import (
    CacheOpt,
    DbOpt,
    ModelOpt,
    ModeOpt,
    OverflowOpt,
    RulesOpt,
    SimOpt,
    SubOpt,
    TimeoutOpt,
    build_verifier,
)
from docket.cli.verify_report import flag_tables, stats_tables, summary_tables
from docket.config import load_settings
from docket.errors import ModelUnavailableError
from docket.fanout import bounded_map
from docket.writing import write_atomically

if TYPE_CHECKING:
    from docket.store.base import Store


class DefaultRunGroup(TyperGroup):
    """A group that runs ``run`` when the first argument is not a sub-command."""

    def parse_args(self, ctx, args):  # type: ignore[no-untyped-def]
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["run", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=DefaultRunGroup,
    help="Verify records against SOP rules (fmt by code, sim/sub by LLM); feedback stats; API server.",
    no_args_is_help=True,
)
token_app = typer.Typer(
    help="Manage bearer tokens for the API and the annotator page.", no_args_is_help=True
)
app.add_typer(token_app, name="token")
app.command("labelstudio")(labelstudio)


async def _verify_all(verifier: Verifier, records: list[Record], concurrency: int) -> list[Verdict]:
    columns = (TextColumn("verifying"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("verify", total=len(records))
        return await bounded_map(
            records,
            lambda record: verifier.verify(Submission(record)),
            limit=concurrency,
            on_done=lambda _index, _verdict: progress.advance(task),
        )


UNREAD = ("unparsed", "model_error")
"""Causes of LLM checks whose reply could not be read (the model answered, but not usably)."""


def unreachable_error(verdicts: list[Verdict], written: str) -> ModelUnavailableError | None:
    """The error to exit with when some LLM checks could not reach their model."""
    failed = [r for v in verdicts for r in v.results if r.cause == "model_unavailable"]
    if not failed:
        return None
    llm = sum(1 for v in verdicts for r in v.results if r.tier != "fmt")
    return ModelUnavailableError(
        f"{len(failed)} of {llm} LLM checks could not reach their model ({failed[0].error})",
        hint=f"start the model server or fix --sim-model/--sub-model; {written}",
    )


def unread_line(verdicts: list[Verdict], written: str) -> str | None:
    """The one line to exit with when some LLM checks got replies that could not be read."""
    unread = [r for v in verdicts for r in v.results if r.cause in UNREAD]
    if not unread:
        return None
    llm = sum(1 for v in verdicts for r in v.results if r.tier != "fmt")
    return (
        f"{len(unread)} of {llm} LLM checks could not be read ({unread[0].error}); "
        f"they are needs_review, not verdicts: check the model or rerun; {written}"
    )


@app.command("run")
def run(
    data: Annotated[Path, typer.Argument(help="records, one JSON object per line")],
    rules: RulesOpt,
    model: ModelOpt = None,
    sim_model: SimOpt = None,
    sub_model: SubOpt = None,
    mode: ModeOpt = "atomic",
    timeout: TimeoutOpt = 60.0,
    overflow: OverflowOpt = "truncate",
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, help="records checked at once")
    ] = 4,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="write one verdict per line (JSONL; '-': standard output)",
            callback=output_path,
        ),
    ] = None,
    db: Annotated[str | None, typer.Option("--db", help="also save runs to this store")] = None,
    cache: CacheOpt = None,
) -> None:
    """Check every record of DATA against the rules; print a summary by rule and tier."""
    from docket.adherence.record import read_records

    records = read_records(data)
    verifier = build_verifier(rules, model, sim_model, sub_model, mode, timeout, overflow, cache)
    # Open the store before the first call, as judging does: a bad --db costs no LLM call.
    store = _open_store(db) if db is not None else None
    verdicts = asyncio.run(_verify_all(verifier, records, concurrency))
    if output is not None:
        write_atomically(output, (v.model_dump_json() + "\n" for v in verdicts))
    if store is not None and db is not None:
        _save(store, db, verdicts, verifier)
    for table in summary_tables(verifier.ruleset, verdicts):
        out.print(table)
    kept = f"the per-rule records are in {output}" if output else "see the summary above"
    if (error := unreachable_error(verdicts, kept)) is not None:
        raise error
    if (line := unread_line(verdicts, kept)) is not None:
        console.print(f"error: {escape(line)}", soft_wrap=True)
        raise typer.Exit(EXIT_FAILED)


def _open_store(db: str) -> Store:
    from docket.store.base import open_store

    return open_store(db)


def _save(store: Store, db: str, verdicts: list[Verdict], verifier: Verifier) -> None:
    from docket.adherence.verify.history import save_verdict
    from docket.adherence.verify.prompts import PROMPT_VERSION
    from docket.adherence.verify.verdict import new_result_id
    from docket.store.base import display_url

    models = {tier: m.name for tier, m in verifier.models.items() if m is not None}
    for verdict in verdicts:
        save_verdict(
            store,
            new_result_id(),
            verdict,
            source="batch",
            models=models,
            prompt_version=PROMPT_VERSION,
        )
    store.close()
    console.print(f"saved {len(verdicts)} runs to {escape(display_url(db))}")


@app.command("stats")
def stats(
    db: DbOpt = None, as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False
) -> None:
    """Accepted-and-fixed rate of flags per rule and per tier, from annotator feedback."""
    from docket.adherence.web.handlers import stats_payload
    from docket.store.base import open_store

    store = open_store(load_settings(db=db).db, read_only=True)
    payload = stats_payload(store)
    store.close()
    if as_json:
        out.print_json(payload.model_dump_json())
        return
    tables = stats_tables(payload.by_rule, payload.by_tier)
    for table in tables + flag_tables(payload.flags_by_rule, payload.flags_by_annotator):
        out.print(table)


@app.command("serve")
def serve(
    rules: RulesOpt,
    model: ModelOpt = None,
    sim_model: SimOpt = None,
    sub_model: SubOpt = None,
    mode: ModeOpt = "atomic",
    timeout: TimeoutOpt = 60.0,
    overflow: OverflowOpt = "truncate",
    db: DbOpt = None,
    cache: CacheOpt = None,
    host: Annotated[str, typer.Option("--host", help="interface to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="port to listen on")] = 8765,
    token_file: TokenFileOpt = None,
    admin: Annotated[
        list[str] | None,
        typer.Option("--admin", help="user who may answer flags on anyone's results (repeatable)"),
    ] = None,
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
    """Start the verification API and the annotator page."""
    from docket.adherence.web.api import DEFAULT_SETTINGS, create_app
    from docket.adherence.web.tokens import startup_tokens
    from docket.store.base import open_store
    from docket.web.serve import bind, serve

    settings = web_flags.web_settings(
        DEFAULT_SETTINGS,
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
    bind(host, port).close()  # a bad --host or --port is refused before the model loads
    tokens, admins = startup_tokens(token_file), set(admin or [])
    verifier = build_verifier(rules, model, sim_model, sub_model, mode, timeout, overflow, cache)
    store = open_store(load_settings(db=db).db)
    app_ = create_app(verifier, store=store, tokens=tokens, admins=admins, settings=settings)

    def announce(url: str) -> None:
        console.print(f"annotator page: {url}/annotate", soft_wrap=True)
        console.print(f"API schema:     {url}/openapi.json", soft_wrap=True)

    serve(app_, host, port, announce)


@token_app.command("add")
def token_add(
    name: Annotated[str, typer.Argument(help="who uses the token")], db: DbOpt = None
) -> None:
    """Create a token for NAME and print it once (only its hash is stored)."""
    from docket.adherence.web.tokens import add_token
    from docket.store.base import open_store
    from docket.web.tokens import check_user_name

    check_user_name(name.strip())  # before the store exists: a refused name creates nothing
    store = open_store(load_settings(db=db).db)
    out.print(add_token(store, name), soft_wrap=True)
    store.close()


@token_app.command("revoke")
def token_revoke(
    name: Annotated[str, typer.Argument(help="whose tokens to revoke")], db: DbOpt = None
) -> None:
    """Revoke every token of NAME."""
    from docket.adherence.web.tokens import revoke_tokens
    from docket.store.base import open_store

    store = open_store(load_settings(db=db).db)
    count = revoke_tokens(store, name)
    store.close()
    console.print(json.dumps({"revoked": count}))
