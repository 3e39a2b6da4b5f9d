"""A corpus document: the value every corpus reader (files, the index, ir_datasets) returns.

Its own module so that :mod:`docket.ir.irds` needs nothing of the file readers, which load
it on demand: the import graph of ``ir`` has no circle.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Document:
    """One corpus entry."""

    docid: str
    text: str
    title: str = ""

    @property
    def passage(self) -> str:
        """Title and text as shown to a judge."""
        return f"{self.title}\n\n{self.text}" if self.title else self.text
