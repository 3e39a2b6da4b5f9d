"""Annotation records: a dialogue (turns) plus named text fields, read from JSONL."""

from __future__ import annotations

import difflib
from pathlib import Path

from pydantic import BaseModel, ValidationError

from docket.errors import InputError
from docket.reading import Text, loads_json, numbered_lines, validation_error

KNOWN_ROLES = ("user", "assistant", "system", "tool")
"""The chat roles. Other roles (``customer``, ``agent``) are allowed; near misses are not."""


def role_problem(role: str) -> str | None:
    """Why ``role`` looks like a mistyped known role (``assistent``, ``User``), or None.

    Roles are compared exactly, so a typo in a rule's scope or a turn silently keeps the
    rule from ever applying; a role close to one of :data:`KNOWN_ROLES` is refused instead.
    """
    if role in KNOWN_ROLES:
        return None
    close = difflib.get_close_matches(role.strip().lower(), KNOWN_ROLES, n=1, cutoff=0.75)
    if close:
        known = ", ".join(KNOWN_ROLES)
        return f"unknown role '{role}': did you mean '{close[0]}'? (known roles: {known})"
    return None


class Turn(BaseModel):
    """One dialogue turn.

    Attributes:
        role: who speaks, e.g. ``user`` or ``assistant``.
        text: what they say.
    """

    role: Text
    text: Text


class Record(BaseModel):
    """One submission checked against a rule set.

    Attributes:
        id: the record's identifier, unique within a file.
        turns: the dialogue so far, oldest first.
        fields: other named text fields (e.g. ``scenario``, ``summary``).
    """

    id: Text
    turns: list[Turn] = []
    fields: dict[Text, Text] = {}


def read_records(path: str | Path) -> list[Record]:
    """Read records from a JSONL file, one JSON object per line.

    Blank lines are skipped. Nothing is returned unless every line is valid.

    Raises:
        InputError: the file is missing, or a line is not JSON or not a valid record;
            the error names the file, the line and the field.
    """
    path = Path(path)
    records: list[Record] = []
    seen: set[str] = set()
    for number, line in numbered_lines(path):
        record = parse_record(line, path=str(path), line=number)
        if record.id in seen:
            raise InputError(f"duplicate id {record.id!r}", path=str(path), line=number, field="id")
        seen.add(record.id)
        records.append(record)
    return records


def parse_record(text: str, *, path: str | None = None, line: int | None = None) -> Record:
    """Parse one JSON line into a :class:`Record`; errors name path, line and field."""
    data = loads_json(text, path, line)
    if not isinstance(data, dict):
        raise InputError("a record must be a JSON object", path=path, line=line)
    if "turns" not in data:
        raise InputError(
            "missing: every record lists its 'turns' ([] for a record of fields only)",
            path=path,
            line=line,
            field="turns",
        )
    try:
        record = Record.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, path, line) from exc
    for index, turn in enumerate(record.turns):
        if (problem := role_problem(turn.role)) is not None:
            raise InputError(problem, path=path, line=line, field=f"turns.{index}.role")
    return record
