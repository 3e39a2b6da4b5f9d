"""One policy for every file a command writes, applied while its flags are parsed.

A missing folder is created (as ``mkdir -p`` would); a path that is a folder, or a folder
that cannot be written, is refused with one line naming the flag, before the command does
any work, so a long run never fails at its last step for want of a folder. ``-`` means
standard output (the writers, through :func:`docket.writing.write_atomically`, print
there); every table and message the command prints (``out``) then goes to standard error,
switched here while the flags are parsed, so the output can be piped whatever prints.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer

from docket.writing import STDOUT, is_stdout


def output_path(value: Path | None) -> Path | None:
    """A typer callback for output options: prepare ``value``'s folder or refuse the path.

    Raises:
        typer.BadParameter: the path is a folder, or its folder cannot be made or written.
    """
    if value is None:
        return value
    if str(value) == STDOUT:
        notes_to_stderr(True)
        return value
    if value.is_dir():
        raise typer.BadParameter(f"{value} is a folder; give a file name")
    folder = value.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise typer.BadParameter(f"cannot create the folder {folder}: {exc.strerror}") from None
    if not os.access(folder, os.W_OK):
        raise typer.BadParameter(f"the folder {folder} is not writable")
    return value


def to_stdout(*paths: Path | str | None) -> bool:
    """Whether one of ``paths`` is ``-`` (standard output)."""
    return any(is_stdout(path) for path in paths)


def notes_to_stderr(on: bool) -> None:
    """Send the command's tables and messages (``docket.cli.common.out``) to standard error
    (``on``: one of its output files is ``-``) or back to standard output (each command's
    start, so one invocation's choice never leaks into the next one in the same process)."""
    from docket.cli.common import out

    out.stderr = on


def image_path(value: Path | None) -> Path | None:
    """:func:`output_path` for a picture (PNG), which standard output cannot take.

    Raises:
        typer.BadParameter: ``-``, or as :func:`output_path`.
    """
    if is_stdout(value):
        raise typer.BadParameter("a plot is written to a file; give a file name, not '-'")
    return output_path(value)
