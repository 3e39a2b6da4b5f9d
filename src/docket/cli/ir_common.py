"""Helpers shared by ``docket holes`` and ``docket eval systems|rag``: inputs and outputs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from docket.errors import UserError
from docket.ir.formats import (
    Qrels,
    Run,
    count_judgments,
    read_qrels,
    read_runs,
    uncovered,
    write_atomically,
)

QrelsOpt = Annotated[
    Path, typer.Option("--qrels", help="TREC qrels file (qid 0 docid grade) or irds:<dataset id>")
]
RunsOpt = Annotated[
    list[Path] | None,
    typer.Option("--runs", help="TREC run files: --runs R1 R2 ... (or repeat --runs)"),
]
MoreRuns = Annotated[list[Path] | None, typer.Argument(help="more run files", show_default=False)]
GradesOpt = Annotated[
    str | None, typer.Option(help="accepted qrels grades, comma-separated (default -2..4)")
]
RelLevelOpt = Annotated[int, typer.Option(help="grade from which a document is relevant")]
DepthOpt = Annotated[int, typer.Option(min=1, help="pooling depth k (Hole@k)")]
CorpusOpt = Annotated[str, typer.Option("--corpus", help="corpus .jsonl/.tsv or irds:<id>")]
IndexOpt = Annotated[
    Path | None, typer.Option(help="SQLite index of the corpus (default: user cache)")
]
QueriesOpt = Annotated[
    str, typer.Option("--queries", help="queries .tsv/.jsonl, TREC topics, or irds:<id>")
]
TopicFieldOpt = Annotated[
    str, typer.Option(help="TREC topics: title | desc | narr (or several: title,desc)")
]
GuidanceFieldOpt = Annotated[
    str | None,
    typer.Option(
        help="fields of --queries put in the prompt after the query as the collection's "
        "definition of relevance for it, e.g. desc,narr (TREC topics, JSONL, irds:)"
    ),
]


def parse_grades(text: str | None) -> list[int] | None:
    """``"0,1,2"`` -> [0, 1, 2]; None stays None (use the default grades)."""
    if text is None:
        return None
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UserError(
            f"--grades '{text}' is not a list of integers", hint="e.g. --grades 0,1,2,3"
        ) from None


def load_qrels(path: Path, grades: str | None) -> Qrels:
    """Read qrels with the grades given on the command line."""
    return read_qrels(path, parse_grades(grades))


def run_paths(runs: Sequence[Path] | None, more: Sequence[Path] | None) -> list[Path]:
    """``--runs`` plus extra positional run files; at least one is required."""
    paths = list(runs or []) + list(more or [])
    if not paths:
        raise UserError("no run files given", hint="pass --runs R1 R2 ...")
    return paths


def load_runs(runs: Sequence[Path] | None, more: Sequence[Path] | None) -> list[Run]:
    """Read ``--runs`` plus extra positional run files; at least one is required."""
    return read_runs(run_paths(runs, more))


def warn_if_partial(original: Qrels, completed: Qrels | None) -> None:
    """Warn when ``--completed-qrels`` lacks original judgments (new labels only)."""
    missing = 0 if completed is None else uncovered(original, completed)
    if missing:
        from docket.cli.common import console

        console.print(
            f"[yellow]warning:[/yellow] --completed-qrels lacks {missing} of the "
            f"{count_judgments(original)} original judgments; completed qrels are the originals "
            "plus the new labels (docket export --completed QRELS, or holes fill --out-qrels)",
            soft_wrap=True,
        )


def split_names(values: Sequence[str] | None, default: Sequence[str]) -> list[str]:
    """Measure names from repeated and/or comma-separated options."""
    if not values:
        return list(default)
    return [name.strip() for value in values for name in value.split(",") if name.strip()]


def write_json(data: Any, path: Path) -> None:
    """Write ``data`` as indented JSON (NaN becomes null); ``-`` is standard output."""
    text = json.dumps(_clean(data), indent=2, sort_keys=False)
    write_atomically(path, [text + "\n"])


def _clean(value: Any) -> Any:
    if isinstance(value, float) and value != value:  # NaN is not JSON
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def fmt(value: float | None, digits: int = 3) -> str:
    """A number for a table cell; '-' when undefined."""
    if value is None or value != value:
        return "-"
    return f"{value:.{digits}f}"
