"""Queries: TSV, JSONL, TREC topic files (:mod:`docket.ir.topics`) or ``irds:`` datasets."""

from __future__ import annotations

from pathlib import Path

from docket.errors import InputError
from docket.ir.formats import first_field, parse_json_line
from docket.reading import read_text


def read_queries(path: str | Path, topic_field: str = "title") -> dict[str, str]:
    """Read queries from TSV (``qid<TAB>text``), JSONL or a TREC topic file.

    JSONL lines carry ``_id``/``id``/``qid`` and ``text``/``query``. A file that starts
    with ``<top>`` is read as TREC topics, taking ``topic_field`` (``title``, ``desc``,
    ``narr``, or several comma-separated). ``irds:<dataset id>`` reads the queries of a
    local ``ir_datasets`` dataset.

    Raises:
        InputError: a line without an id or text, invalid JSON, or a bad topic.
    """
    from docket.ir.topics import looks_like_topics, parse_fields, read_topics

    fields = parse_fields(topic_field)
    if str(path).startswith("irds:"):
        from docket.ir.irds import read_queries as read_irds_queries

        return read_irds_queries(str(path).removeprefix("irds:"))
    text = read_text(path)
    if looks_like_topics(text):
        return read_topics(path, text, fields)
    is_jsonl = ".jsonl" in Path(path).name or ".json" in Path(path).name
    parse = _query_from_json if is_jsonl else _query_from_tsv
    queries: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            qid, query = parse(line, path, number)
            queries[qid] = query
    return queries


def _query_from_tsv(line: str, path: str | Path, number: int) -> tuple[str, str]:
    parts = line.rstrip("\n").split("\t")
    if len(parts) < 2 or not parts[0].strip() or not parts[1].strip():
        raise InputError(
            "expected 'qid<TAB>text'",
            path=str(path),
            line=number,
            hint="separate id and text by a tab, or give TREC topics (<top><num>...)",
        )
    return parts[0].strip(), parts[1].strip()


def _query_from_json(line: str, path: str | Path, number: int) -> tuple[str, str]:
    record = parse_json_line(line, path, number)
    qid = first_field(record, ("_id", "id", "qid"), path, number)
    text = first_field(record, ("text", "query"), path, number)
    return qid, text
