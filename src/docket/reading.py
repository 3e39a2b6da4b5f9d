"""Reading untrusted input files: one place for decoding, JSON and validation errors.

Every reader of a user file (pairs, qrels, runs, queries, topics, corpora, dialogues,
rules, provenance, label files, datasets) goes through these helpers, so that whatever a
file holds, reading it either succeeds or raises one :class:`~docket.errors.InputError`
whose message is one line naming the file, the line and the field:

* :func:`open_text` / :func:`read_text` / :func:`numbered_lines`: UTF-8 text (``.gz``
  transparently); a byte that is not UTF-8 is reported with its line and column, found by
  a second, binary pass that only runs on failure (the hot loops stay in text mode); a
  ``.gz`` file that is not gzip, is damaged or cut short is an error naming the file,
  raised from inside the decompressor, so every reader gets it without a handler;
* :func:`loads_json` / :func:`json_object`: ``json.loads`` bounded: deep nesting
  (``RecursionError``), numbers Python refuses (over 4300 digits, a ``ValueError``) and
  lone surrogates (``"\\ud800"``, which no UTF-8 store or file can hold) are input
  errors, not tracebacks;
* :func:`validation_error` / :func:`first_problem`: a pydantic ``ValidationError`` as an
  error naming the field (``turns.0.role``), the one conversion every model-backed reader
  and option parser uses.

This module imports nothing of docket but :mod:`docket.errors`.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Annotated, Any, NamedTuple

from pydantic import AfterValidator, ValidationError

from docket.errors import InputError

_UTF8_HINT = "save the file as UTF-8 text"
_GZIP_HINT = "check it with gunzip -t, then copy or download it again"
# What the decompressor raises on a damaged stream: BadGzipFile (an OSError) for a file
# that is not gzip or fails its CRC, zlib.error for corrupt data, EOFError when cut short.
_GZIP_FAULTS = (OSError, EOFError, zlib.error)
# A JSON escape of a UTF-16 surrogate (the only way a str can hold a lone one).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# The same in bytes, plus a surrogate encoded as UTF-8 (json.loads decodes bytes leniently).
_SURROGATE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]|\xed[\xa0-\xbf]")
_LINE_BREAKS = re.compile(r"\s*[\r\n]+\s*")


def one_line(text: str) -> str:
    """``text`` with its line breaks (and the blanks around them) turned into one space."""
    return _LINE_BREAKS.sub(" ", str(text)).strip()


def open_text(path: str | Path, error: type[InputError] = InputError) -> IO[str]:
    """Open a text file for reading as UTF-8, transparently decompressing ``.gz``.

    A byte-order mark at the start (Windows editors write one) is dropped, so a JSONL
    file saved with one is still read as JSONL, and a TSV header's first column keeps
    its name.

    Raises:
        InputError: the file does not exist or is a directory.
    """
    path = Path(path)
    if not path.exists():
        raise error("file not found", path=str(path), hint="check the path")
    if path.is_dir():
        raise error("is a folder, not a file", path=str(path), hint="give a file")
    if path.suffix == ".gz":
        return io.TextIOWrapper(CheckedGzip(path, error), encoding="utf-8-sig")
    return path.open(encoding="utf-8-sig")


class CheckedGzip(gzip.GzipFile):
    """A gzip file opened for reading whose faults are one :class:`InputError`.

    Every read a text layer or a loop makes goes through ``read``/``read1``/``readline``/
    ``peek``; a file that is not gzip, damaged or cut short raises ``error`` naming it.
    """

    def __init__(self, path: str | Path, error: type[InputError] = InputError) -> None:
        super().__init__(path, "rb")
        self._path, self._error = str(path), error

    def _checked(self, read: Any, *args: Any) -> Any:
        try:
            return read(*args)
        except _GZIP_FAULTS as exc:
            raise gzip_error(self._path, exc, self._error) from None

    def read(self, size: int | None = -1) -> bytes:
        """Read decompressed bytes (see :class:`gzip.GzipFile`)."""
        return self._checked(super().read, size)

    def read1(self, size: int = -1) -> bytes:
        """Read decompressed bytes with at most one read of the file."""
        return self._checked(super().read1, size)

    def readline(self, size: int | None = -1) -> bytes:
        """Read one decompressed line."""
        return self._checked(super().readline, size)

    def peek(self, n: int) -> bytes:
        """Decompressed bytes ahead, without moving."""
        return self._checked(super().peek, n)


def gzip_error(
    path: str | Path, exc: BaseException, error: type[InputError] = InputError
) -> InputError:
    """The error for a ``.gz`` file the decompressor refused (not gzip, damaged, cut short)."""
    hint = _GZIP_HINT
    if isinstance(exc, EOFError):
        problem = "the gzip file is cut short (it ends before its end marker)"
    elif isinstance(exc, gzip.BadGzipFile) and "Not a gzipped file" in str(exc):
        problem = "not a gzip file, although its name ends in .gz"
        hint = "drop the .gz from the name of a plain text file, or compress it with gzip"
    else:
        problem = f"a damaged gzip file ({one_line(str(exc)) or type(exc).__name__})"
    return error(problem, path=str(path), hint=hint)


def not_utf8(path: str | Path, error: type[InputError] = InputError) -> InputError:
    """The error for a file that failed to decode: the first line that is not UTF-8.

    Called from an ``except UnicodeDecodeError`` of a text-mode reader; it reads the file
    again as bytes to find the line and column (the text layer decodes in blocks, so the
    exception cannot tell which line it was in).
    """
    gzipped = Path(path).suffix == ".gz"
    with CheckedGzip(path, error) if gzipped else open(path, "rb") as handle:
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
        InputError: invalid JSON, nesting deeper than Python's recursion limit allows,
            a number Python refuses to convert (over 4300 digits), or a lone surrogate.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"not valid JSON ({exc.msg}, column {exc.colno})"
    except RecursionError:
        problem = "not usable JSON (nested too deeply)"
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        problem = f"not usable JSON ({one_line(exc.args[0])})"
    else:
        problem = surrogate_problem(text, value)
        if problem is None:
            return value
    raise InputError(problem, path=None if path is None else str(path), line=line)


def surrogate_problem(text: str | bytes, value: Any) -> str | None:
    """Why ``value``, parsed from the JSON ``text``, cannot be stored (a lone surrogate),
    or None; the text is searched first, so a value is walked only when it may hold one."""
    suspect = _SURROGATE_ESCAPE if isinstance(text, str) else _SURROGATE_BYTES
    if not suspect.search(text):  # type: ignore[arg-type]
        return None
    return lone_surrogate(value)


def lone_surrogate(value: Any) -> str | None:
    """Why ``value`` (parsed JSON) cannot be stored: a string holding a lone surrogate.

    A valid pair (``"\\ud83d\\ude00"``) is joined by ``json.loads``; a lone half is no
    Unicode character, so writing it as UTF-8 (the store, an export) would fail later.
    """
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(exc.object[exc.start])
        return f"not usable text (a lone surrogate \\u{code:04x}, which is no character)"
    return None


def json_object(text: str, path: str | Path | None = None, line: int | None = None) -> dict:
    """One JSON object (a JSONL line), or InputError (also for a list or a number)."""
    record = loads_json(text, path, line)
    if not isinstance(record, dict):
        raise InputError(
            "expected a JSON object", path=None if path is None else str(path), line=line
        )
    return record


def whole_characters(text: str) -> str:
    """``text`` itself, or ValueError when it holds a lone surrogate (a pydantic validator).

    JSON can carry one (``"\\ud800"``) and Python keeps it, but no UTF-8 file or store
    can: a request or record holding one is refused where it is read, not when it is saved.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        raise ValueError(f"a lone surrogate \\u{code:04x} is no character") from None
    return text


Text = Annotated[str, AfterValidator(whole_characters)]
"""A ``str`` field of a pydantic model that refuses lone surrogates (see
:func:`whole_characters`)."""


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
