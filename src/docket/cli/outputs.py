"""One policy for every file a command writes, applied while its flags are parsed.

A missing folder is created (as ``mkdir -p`` would); a path that is a folder, or a folder
that cannot be written, is refused with one line naming the flag, before the command does
any work, so a long run never fails at its last step for want of a folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import typer


def output_path(value: Path | None) -> Path | None:
    """A typer callback for output options: prepare ``value``'s folder or refuse the path.

    Raises:
        typer.BadParameter: the path is a folder, or its folder cannot be made or written.
    """
    if value is None or str(value) == "-":
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
