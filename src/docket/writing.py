"""Writing output files: atomically, or to standard output for ``-``.

Every text file a command writes (qrels, JSONL exports, per-query tables, reports, rule
files) goes through :func:`write_atomically`, so none is ever left half-written, and the
path ``-`` means standard output everywhere, as trec_eval and ir_measures users expect.

This module imports nothing of docket.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

STDOUT = "-"
"""The path that means standard output (``-o -``)."""


def is_stdout(path: str | Path | None) -> bool:
    """Whether ``path`` is ``-`` (standard output)."""
    return path is not None and str(path) == STDOUT


def _umask() -> int:
    # os.umask can only be read by setting it; put it straight back.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomically(path: str | Path, lines: Iterable[str]) -> int:
    """Write to a temporary file beside ``path`` and rename: never a half-written file.

    The file gets the permissions a plain ``open(path, "w")`` would give it (0644 under
    a 022 umask), not the private 0600 of the temporary file. ``path`` ``-`` writes to
    standard output instead.

    Returns:
        The number of lines written.
    """
    if is_stdout(path):
        return _write_stdout(lines)
    count = 0
    with replacing(path) as tmp, tmp.open("w", encoding="utf-8") as handle:
        for line in lines:
            handle.write(line)
            count += 1
    return count


@contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """A temporary file beside ``path``, renamed onto it when the block ends without error.

    The file is unique to this writer, so two processes building the same file (two
    workers indexing one corpus into the shared cache) never write into or rename each
    other's; the last rename wins and each one's result is whole. On an error the
    temporary file is removed and ``path`` is untouched. The file gets the permissions a
    plain ``open(path, "w")`` would give it, not the private 0600 of ``mkstemp``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (``-``: standard output)."""
    write_atomically(path, [text])


def _write_stdout(lines: Iterable[str]) -> int:
    count = 0
    for line in lines:
        sys.stdout.write(line)
        count += 1
    sys.stdout.flush()
    return count
