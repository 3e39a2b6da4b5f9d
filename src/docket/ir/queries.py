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


def read_guidance(path: str | Path, fields: str = "desc,narr") -> dict[str, str]:
    """Each query's guidance: the ``fields`` of a TREC topic file or an ``irds:`` dataset.

    The fields (``desc``, ``narr``, ``title``, comma-separated) are joined as labelled
    lines (``Description: ...`` / ``Narrative: ...``). JSONL queries give a ``guidance``
    field, or the fields by name (``description``/``desc``, ``narrative``/``narr``). A query
    without any of them gets "".

    Raises:
        InputError: a TSV queries file (it has no fields besides the query), or bad topics.
    """
    from docket.ir.topics import LABELS, looks_like_topics, parse_fields, read_topic_fields

    chosen = parse_fields(fields)
    if str(path).startswith("irds:"):
        from docket.ir.irds import read_query_fields

        return read_query_fields(str(path).removeprefix("irds:"), chosen)
    text = read_text(path)
    if looks_like_topics(text):
        return read_topic_fields(path, text, chosen)
    if not (".jsonl" in Path(path).name or ".json" in Path(path).name):
        raise InputError(
            "a TSV queries file has no description or narrative", path=str(path),
            hint="give TREC topics, JSONL queries with a 'guidance' field, or an irds: id",
        )  # fmt: skip
    names = {"title": ("title",), "desc": ("description", "desc"),
             "narr": ("narrative", "narr")}  # fmt: skip
    found: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        record = parse_json_line(line, path, number)
        qid = first_field(record, ("_id", "id", "qid"), path, number)
        if isinstance(record.get("guidance"), str):
            found[qid] = record["guidance"].strip()
            continue
        values = [(f, next((str(record[n]) for n in names[f] if record.get(n)), ""))
                  for f in chosen]  # fmt: skip
        found[qid] = "\n".join(f"{LABELS[f]}: {v.strip()}" for f, v in values if v.strip())
    return found


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
