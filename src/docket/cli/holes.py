"""``docket holes``: find unjudged pooled documents, fill them, compose qrels, simulate holes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from docket.cli.common import escape, id_column, out
from docket.cli.holes_fill import fill_command
from docket.cli.holes_simulate import simulate_command
from docket.cli.ir_common import (
    DepthOpt,
    GradesOpt,
    IndexOpt,
    MoreRuns,
    QrelsOpt,
    RunsOpt,
    fmt,
    load_qrels,
    load_runs,
    write_json,
)
from docket.cli.outputs import output_path
from docket.ir.corpus import open_corpus
from docket.ir.formats import count_judgments, write_atomically, write_qrels
from docket.ir.holes import HoleReport, find_holes
from docket.ir.provenance import LEVELS, compose_qrels, read_provenance

app = typer.Typer(
    help="Holes in IR benchmarks: find, fill and simulate unjudged documents.", no_args_is_help=True
)


@app.command("find")
def find_command(
    qrels: QrelsOpt,
    runs: RunsOpt = None,
    more_runs: MoreRuns = None,
    depth: DepthOpt = 10,
    corpus: Annotated[str | None, typer.Option(help="corpus to check the holes against")] = None,
    corpus_index: IndexOpt = None,
    out_path: Annotated[
        Path | None, typer.Option("--out", help="write the holes as JSONL", callback=output_path)
    ] = None,
    report: Annotated[
        Path | None, typer.Option(help="write per-system and per-query JSON", callback=output_path)
    ] = None,
    grades: GradesOpt = None,
) -> None:
    """Pool the top-k of every run, list unjudged pairs and report Hole@k."""
    original = load_qrels(qrels, grades)
    systems = load_runs(runs, more_runs)
    lookup = open_corpus(corpus, corpus_index) if corpus else None
    result = find_holes(original, systems, depth, lookup)
    if out_path is not None:
        _write_holes(result, out_path)
    if report is not None:
        write_json(result.summary(), report)
    _print_holes(result, count_judgments(original), out)


def _write_holes(result: HoleReport, path: Path) -> None:
    import json

    missing = set(result.missing_documents)

    def line(hole: Any) -> str:
        record = {
            "qid": hole.qid,
            "docid": hole.docid,
            "best_rank": hole.best_rank,
            "systems": list(hole.systems),
        }
        if (hole.qid, hole.docid) in missing:
            record["missing_document"] = True
        return json.dumps(record) + "\n"

    write_atomically(path, map(line, result.holes))


def _print_holes(result: HoleReport, judged: int, out: Console) -> None:
    k = result.depth
    table = Table(title=f"Hole@{k} per system ({result.queries} queries)")
    id_column(table, "system", result.hole_at_k)
    for column in (f"Hole@{k}", f"Judged@{k}", "queries missing", "duplicates"):
        table.add_column(column, justify="right", overflow="fold")
    for name, rate in sorted(result.hole_at_k.items(), key=lambda item: (-item[1], item[0])):
        table.add_row(
            escape(name),
            fmt(rate),
            fmt(1 - rate),
            str(result.missing_queries[name]),
            str(result.duplicates[name]),
        )
    out.print(table)
    mean = sum(result.hole_at_k.values()) / max(1, len(result.hole_at_k))
    out.print(
        f"pool@{k}: {result.pool_size} pairs, {len(result.holes)} unjudged "
        f"({len(result.holes) / max(1, judged):.0%} of the {judged} original judgments); "
        f"mean Hole@{k} {mean:.3f}"
    )
    if result.queries_without_qrels:
        out.print(f"{len(result.queries_without_qrels)} run queries have no qrels (not pooled)")
    if result.missing_documents:
        out.print(f"{len(result.missing_documents)} holes name documents missing from the corpus")


@app.command("compose")
def compose_command(
    qrels: QrelsOpt,
    provenance: Annotated[
        Path, typer.Option("--provenance", help="provenance JSONL from holes fill")
    ],
    out_qrels: Annotated[
        Path, typer.Option("--out-qrels", help="qrels to write", callback=output_path)
    ],
    level: Annotated[str, typer.Option(help="original | automatic | reviewed")] = "automatic",
    grades: GradesOpt = None,
) -> None:
    """Write qrels for one trust level from the original qrels and a provenance file."""
    if level not in LEVELS:
        raise typer.BadParameter(f"use one of {', '.join(LEVELS)}", param_hint="--level")
    original = load_qrels(qrels, grades)
    composed = compose_qrels(original, read_provenance(provenance), level)  # type: ignore[arg-type]
    write_qrels(composed, out_qrels)
    out.print(f"{count_judgments(composed)} judgments ({level}) written to {escape(out_qrels)}")


app.command("fill")(fill_command)
app.command("simulate")(simulate_command)
