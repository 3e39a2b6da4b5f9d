"""Reading untrusted input files: one place for decoding, JSON and validation errors.

Every reader of a user file (pairs, qrels, runs, queries, topics, corpora, dialogues,
rules, provenance, label files, datasets) goes through these helpers, so that whatever a
file holds, reading it either succeeds or raises one :class:`~docket.errors.InputError`
whose message is one line naming the file, the line and the field:

* :func:`open_text` / :func:`read_text` / :func:`numbered_lines`: UTF-8 text (``.gz``
  transparently); a byte that is not UTF-8 is reported with its line and column, found by
  a second, binary pass that only runs on failure (the hot loops stay in text mode);
* :func:`loads_json` / :func:`json_object`: ``json.loads`` bounded: deep nesting
  (``RecursionError``) and numbers Python refuses (over 4300 digits, a ``ValueError``) are
  input errors, not tracebacks;
* :func:`validation_error` / :func:`first_problem`: a pydantic ``ValidationError`` as an
  error naming the field (``turns.0.role``), the one conversion every model-backed reader
  and option parser uses.

This module imports nothing of docket but :mod:`docket.errors`.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple

from pydantic import ValidationError

from docket.errors import InputError

_UTF8_HINT = "save the file as UTF-8 text"
_LINE_BREAKS = re.compile(r"\s*[\r\n]+\s*")


def one_line(text: str) -> str:
    """``text`` with its line breaks (and the blanks around them) turned into one space."""
    return _LINE_BREAKS.sub(" ", str(text)).strip()


def open_text(path: str | Path, error: type[InputError] = InputError) -> IO[str]:
    """Open a text file for reading as UTF-8, transparently decompressing ``.gz``.

    Raises:
        InputError: the file does not exist or is a directory.
    """
    path = Path(path)
    if not path.exists():
        raise error("file not found", path=str(path), hint="check the path")
    if path.is_dir():
        raise error("is a folder, not a file", path=str(path), hint="give a file")
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


def not_utf8(path: str | Path, error: type[InputError] = InputError) -> InputError:
    """The error for a file that failed to decode: the first line that is not UTF-8.

    Called from an ``except UnicodeDecodeError`` of a text-mode reader; it reads the file
    again as bytes to find the line and column (the text layer decodes in blocks, so the
    exception cannot tell which line it was in).
    """
    opener = gzip.open if Path(path).suffix == ".gz" else open
    with opener(path, "rb") as handle:  # type: ignore[operator]
        for number, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                byte = raw[exc.start]
                return error(
                    f"not UTF-8 text (byte 0x{byte:02x} at column {exc.start + 1})",
                    path=str(path),
                    line=number,
                    hint=_UTF8_HINT,
                )
    # Only a sequence cut by the end of the file gets here.
    return error("not UTF-8 text (the file ends inside a character)", path=str(path))


def read_text(path: str | Path, error: type[InputError] = InputError) -> str:
    """The whole UTF-8 text of a file (``.gz`` transparently), with located errors.

    ``error`` is the InputError subclass raised (e.g. ``RulesFileError``).

    Raises:
        InputError: missing file, a folder, or bytes that are not UTF-8 (line and column).
    """
    with open_text(path, error) as handle:
        try:
            return handle.read()
        except UnicodeDecodeError:
            raise not_utf8(path, error) from None


def numbered_lines(path: str | Path, *, blank: bool = False) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for the lines of a text file, 1-based, with located errors.

    Args:
        path: the file (UTF-8, optionally gzipped).
        blank: also yield blank lines (by default they are skipped, numbers still count).

    Raises:
        InputError: as :func:`read_text`.
    """
    with open_text(path) as handle:
        try:
            for number, line in enumerate(handle, start=1):
                if blank or line.strip():
                    yield number, line
        except UnicodeDecodeError:
            raise not_utf8(path) from None


def loads_json(text: str | bytes, path: str | Path | None = None, line: int | None = None) -> Any:
    """``json.loads`` for untrusted text: every failure is one :class:`InputError`.

    Raises:
        InputError: invalid JSON, nesting deeper than Python's recursion limit allows, or
            a number Python refuses to convert (over 4300 digits).
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"not valid JSON ({exc.msg}, column {exc.colno})"
    except RecursionError:
        problem = "not usable JSON (nested too deeply)"
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        problem = f"not usable JSON ({one_line(exc.args[0])})"
    raise InputError(problem, path=None if path is None else str(path), line=line)


def json_object(text: str, path: str | Path | None = None, line: int | None = None) -> dict:
    """One JSON object (a JSONL line), or InputError (also for a list or a number)."""
    record = loads_json(text, path, line)
    if not isinstance(record, dict):
        raise InputError(
            "expected a JSON object", path=None if path is None else str(path), line=line
        )
    return record


class Problem(NamedTuple):
    """The first problem of a pydantic ``ValidationError``.

    Attributes:
        field: the dotted location (``turns.0.role``), None at the top level.
        message: pydantic's message without its ``Value error, `` prefix, on one line.
        kind: pydantic's error type (``missing``, ``extra_forbidden``, ``string_type``...).
    """

    field: str | None
    message: str
    kind: str


def first_problem(exc: ValidationError) -> Problem:
    """The first error of a pydantic ``ValidationError`` (the one every message reports)."""
    first = exc.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    return Problem(field, one_line(first["msg"].removeprefix("Value error, ")), first["type"])


def validation_error(
    exc: ValidationError,
    path: str | Path | None = None,
    line: int | None = None,
    *,
    prefix: str | None = None,
    error: type[InputError] = InputError,
    hint: str = "",
) -> InputError:
    """A pydantic ``ValidationError`` as an :class:`InputError` naming the field.

    Args:
        exc: the validation error (its first problem is reported).
        path: the file, if any.
        line: the line (or record) number, if any.
        prefix: prepended to the field (``rules[2] (id 'x')`` -> ``rules[2] (id 'x').text``).
        error: the InputError subclass to build (e.g. ``RulesFileError``).
        hint: how to fix it.
    """
    field, message, _ = first_problem(exc)
    if prefix:
        field = f"{prefix}.{field}" if field else prefix
    return error(
        message, path=None if path is None else str(path), line=line, field=field, hint=hint
    )
