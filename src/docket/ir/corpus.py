"""Corpora indexed on disk: JSONL (BEIR), TSV, or an ``ir_datasets`` id.

A corpus is streamed once into a SQLite file (docid -> title, text) in batches, so memory
stays flat whatever its size; later runs reuse the index while the source file is
unchanged. Lookups fetch only the documents asked for.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import Protocol

from platformdirs import user_cache_dir

from docket.errors import InputError
from docket.ir.documents import Document
from docket.ir.formats import first_field, parse_json_line
from docket.reading import numbered_lines
from docket.writing import replacing

BATCH = 10_000
INDEX_VERSION = "1"


class Corpus(Protocol):
    """Anything that can look documents up by id."""

    def get_many(self, docids: Iterable[str]) -> dict[str, Document]:
        """The documents found among ``docids`` (missing ids are simply absent)."""
        ...


def iter_jsonl_corpus(path: str | Path) -> Iterator[Document]:
    """Stream a BEIR-style JSONL corpus (``_id``/``id``, ``text``, optional ``title``)."""
    for number, line in numbered_lines(path):
        record = parse_json_line(line, path, number)
        docid = first_field(record, ("_id", "id", "docid"), path, number)
        if not isinstance(record.get("text"), str):
            raise InputError("missing or non-text field", path=str(path), line=number, field="text")
        yield Document(docid, record["text"], str(record.get("title") or ""))


def iter_tsv_corpus(path: str | Path) -> Iterator[Document]:
    """Stream a TSV corpus: ``docid<TAB>text`` or ``docid<TAB>text<TAB>title``; a header is skipped."""
    for number, line in numbered_lines(path):
        parts = line.rstrip("\n").split("\t")
        if number == 1 and parts[0].strip().lower() in ("id", "_id", "docid", "doc_id"):
            continue
        if len(parts) < 2 or not parts[0].strip():
            raise InputError("expected 'docid<TAB>text'", path=str(path), line=number)
        title = parts[2] if len(parts) > 2 else ""
        yield Document(parts[0].strip(), parts[1], title)


def iter_corpus_file(path: str | Path) -> Iterator[Document]:
    """Stream a corpus file, choosing the reader by extension (.jsonl or .tsv, optionally .gz)."""
    name = Path(path).name.removesuffix(".gz")
    if name.endswith((".jsonl", ".json")):
        return iter_jsonl_corpus(path)
    if name.endswith((".tsv", ".txt")):
        return iter_tsv_corpus(path)
    raise InputError(
        f"unknown corpus format: {path}",
        hint="use a .jsonl (BEIR) or .tsv (docid<TAB>text) file, or irds:<dataset-id>",
    )


class CorpusIndex:
    """A SQLite index docid -> (title, text), built by streaming; satisfies :class:`Corpus`.

    Attributes:
        path: the SQLite file.
        size: number of indexed documents.
        duplicates: documents skipped while building because their docid was already seen.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        self.size = int(meta.get("size", 0))
        self.duplicates = int(meta.get("duplicates", 0))
        self.source = meta.get("source", "")

    @classmethod
    def build(
        cls,
        documents: Iterable[Document],
        path: str | Path,
        *,
        source: str = "",
        batch: int = BATCH,
    ) -> CorpusIndex:
        """Stream ``documents`` into a new index at ``path`` and open it.

        The index is written to a temporary file of this process's own and renamed on
        success, so a corpus with a bad line leaves no half-built index behind, and two
        processes building the same index never disturb each other.
        """
        with replacing(path) as partial:
            _write_index(documents, partial, source, batch)
        return cls(path)

    def get_many(self, docids: Iterable[str]) -> dict[str, Document]:
        """The documents found among ``docids``."""
        found: dict[str, Document] = {}
        ids = iter(dict.fromkeys(docids))
        while chunk := list(islice(ids, 500)):
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT docid, title, text FROM docs WHERE docid IN ({marks})", chunk
            )
            found.update((docid, Document(docid, text, title)) for docid, title, text in rows)
        return found

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()


def _write_index(documents: Iterable[Document], path: Path, source: str, batch: int) -> None:
    db = sqlite3.connect(path)
    try:
        # The partial file is discarded on failure, so durability during the build is moot.
        db.executescript(
            "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA cache_size=-262144;"
            "CREATE TABLE docs (docid TEXT PRIMARY KEY, title TEXT NOT NULL, text TEXT NOT NULL);"
            "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        )
        size = duplicates = 0
        rows = ((d.docid, d.title, d.text) for d in documents)
        while chunk := list(islice(rows, batch)):
            before = db.total_changes
            db.executemany("INSERT OR IGNORE INTO docs VALUES (?, ?, ?)", chunk)
            added = db.total_changes - before
            size, duplicates = size + added, duplicates + len(chunk) - added
        meta = {"size": size, "duplicates": duplicates, "source": source, "version": INDEX_VERSION}
        db.executemany("INSERT INTO meta VALUES (?, ?)", [(k, str(v)) for k, v in meta.items()])
        db.commit()
    finally:
        db.close()


def source_signature(path: str | Path) -> str:
    """Identity of a corpus file: absolute path, size and modification time."""
    stat = Path(path).stat()
    return f"{Path(path).resolve()}|{stat.st_size}|{stat.st_mtime_ns}|v{INDEX_VERSION}"


def default_index_path(spec: str) -> Path:
    """Where the index of a corpus lives by default: the user cache directory."""
    digest = hashlib.sha256(str(Path(spec).resolve()).encode()).hexdigest()[:16]
    return Path(user_cache_dir("docket")) / "corpora" / f"{Path(spec).name}.{digest}.sqlite"


def open_corpus(spec: str | Path, index_path: str | Path | None = None) -> Corpus:
    """Open a corpus file (building or reusing its index) or an ``irds:<id>`` dataset.

    Args:
        spec: a .jsonl/.tsv corpus (optionally gzipped), or ``irds:<ir_datasets id>``.
        index_path: where to keep the SQLite index; default in the user cache directory.
    """
    spec = str(spec)
    if spec.startswith("irds:"):
        from docket.ir.irds import IrDatasetsCorpus

        return IrDatasetsCorpus(spec.removeprefix("irds:"))
    if not Path(spec).exists():
        raise InputError(f"corpus not found: {spec}", hint="check the --corpus path")
    target = Path(index_path) if index_path else default_index_path(spec)
    signature = source_signature(spec)
    if target.exists():
        index = _try_open(target)
        if index is not None and index.source == signature:
            return index
        if index is not None:
            index.close()
    return CorpusIndex.build(iter_corpus_file(spec), target, source=signature)


def _try_open(path: Path) -> CorpusIndex | None:
    try:
        return CorpusIndex(path)
    except sqlite3.DatabaseError:
        return None  # not an index of ours (or corrupt): rebuild it
