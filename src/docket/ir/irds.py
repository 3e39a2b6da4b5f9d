"""Optional access to ``ir_datasets`` collections whose data is already on this machine.

docket never downloads: while it reads a dataset, ``ir_datasets``' HTTP download is
replaced by an error, so missing data becomes a clear :class:`UserError`.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from docket.errors import MissingDependencyError, UserError
from docket.ir.documents import Document


class _DownloadBlocked(Exception):
    """Raised instead of an HTTP download."""


def _module() -> Any:
    try:
        import ir_datasets
    except ImportError:
        raise MissingDependencyError("ir_datasets", "ir") from None
    return ir_datasets


@contextlib.contextmanager
def _no_download(dataset_id: str, part: str = "docs") -> Iterator[None]:
    """Turn any attempted download of ``part`` (docs, queries, qrels) into one UserError.

    ``ir_datasets`` tries each mirror in turn and reports "All download sources failed"
    with the blocked attempts inside; both forms end here.
    """
    _module()
    downloads = importlib.import_module("ir_datasets.util.download")
    download = downloads.RequestsDownload
    # ir_datasets logs one "Download failed" line per mirror before it gives up; the
    # UserError below says it once.
    easy = getattr(downloads, "_logger", None)
    quiet = easy.logger() if easy is not None else logging.getLogger("ir_datasets")
    level = quiet.level

    def blocked(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise _DownloadBlocked(getattr(self, "url", "?"))

    saved = download.__iter__
    download.__iter__ = blocked
    quiet.setLevel(logging.ERROR)
    try:
        yield
    except _DownloadBlocked as exc:
        raise _not_here(dataset_id, part, str(exc)) from None
    except RuntimeError as exc:
        blocked_urls = [str(e) for _, e in _attempts(exc) if isinstance(e, _DownloadBlocked)]
        if not blocked_urls:
            raise
        raise _not_here(dataset_id, part, blocked_urls[0]) from None
    finally:
        download.__iter__ = saved
        quiet.setLevel(level)


def _attempts(exc: RuntimeError) -> list[tuple[Any, BaseException]]:
    """The ``(source, error)`` pairs of ir_datasets' "All download sources failed"."""
    if len(exc.args) == 2 and isinstance(exc.args[1], list):
        return [a for a in exc.args[1] if isinstance(a, tuple) and len(a) == 2]
    return []


def _not_here(dataset_id: str, part: str, url: str) -> UserError:
    fallback = {
        "docs": "or pass the corpus as a .jsonl/.tsv file",
        "queries": "or pass the queries as a .tsv/.jsonl file or TREC topics",
        "qrels": "or pass the qrels as a TREC qrels file",
    }[part]
    return UserError(
        f"the {part} of ir_datasets '{dataset_id}' are not on this machine (docket does not "
        f"download; ir_datasets would fetch {url})",
        hint=f"fetch them once with `ir_datasets export {dataset_id} {part} > /dev/null`, "
        f"{fallback}",
    )


def load(dataset_id: str) -> Any:
    """The ``ir_datasets`` dataset object, or a UserError for an unknown id."""
    module = _module()
    try:
        return module.load(dataset_id)
    except KeyError:
        raise UserError(
            f"unknown ir_datasets id '{dataset_id}'", hint="see https://ir-datasets.com for ids"
        ) from None


class IrDatasetsCorpus:
    """Document lookup through the dataset's own docs store (no copy into docket)."""

    def __init__(self, dataset_id: str) -> None:
        self.dataset_id = dataset_id
        self.dataset = load(dataset_id)
        if not self.dataset.has_docs():
            raise UserError(f"ir_datasets '{dataset_id}' has no documents")

    def get_many(self, docids: Iterable[str]) -> dict[str, Document]:
        """The documents found among ``docids``."""
        with _no_download(self.dataset_id):
            found = self.dataset.docs_store().get_many(list(docids))
        return {docid: _document(doc) for docid, doc in found.items()}


def _document(doc: Any) -> Document:
    text = getattr(doc, "text", None)
    if text is None:
        text = doc.default_text()
    return Document(doc.doc_id, text, str(getattr(doc, "title", "") or ""))


def read_queries(dataset_id: str) -> dict[str, str]:
    """Queries of an ``ir_datasets`` dataset as ``{qid: text}``."""
    dataset = load(dataset_id)
    if not dataset.has_queries():
        raise UserError(f"ir_datasets '{dataset_id}' has no queries")
    with _no_download(dataset_id, "queries"):
        return {
            q.query_id: getattr(q, "text", None) or q.default_text() for q in dataset.queries_iter()
        }


def read_query_fields(dataset_id: str, fields: Sequence[str]) -> dict[str, str]:
    """``{qid: text}`` of the queries' ``description``/``narrative`` fields, labelled.

    ``fields`` are docket's topic field names (``desc``, ``narr``, ``title``); a query
    without them gets "".
    """
    names = {"title": ("title", "text"), "desc": ("description",), "narr": ("narrative",)}
    labels = {"title": "Title", "desc": "Description", "narr": "Narrative"}
    dataset = load(dataset_id)
    if not dataset.has_queries():
        raise UserError(f"ir_datasets '{dataset_id}' has no queries")
    found: dict[str, str] = {}
    with _no_download(dataset_id, "queries"):
        for query in dataset.queries_iter():
            values = [(f, next((str(v) for n in names[f] if (v := getattr(query, n, None))), ""))
                      for f in fields]  # fmt: skip
            found[query.query_id] = "\n".join(
                f"{labels[f]}: {' '.join(v.split())}" for f, v in values if v.strip()
            )
    return found


def read_qrels(dataset_id: str) -> dict[str, dict[str, int]]:
    """Qrels of an ``ir_datasets`` dataset as ``{qid: {docid: grade}}``.

    Raises:
        UserError: the dataset has no qrels, or judges a pair twice with different grades.
    """
    dataset = load(dataset_id)
    if not dataset.has_qrels():
        raise UserError(f"ir_datasets '{dataset_id}' has no qrels")
    qrels: dict[str, dict[str, int]] = {}
    with _no_download(dataset_id, "qrels"):
        for qrel in dataset.qrels_iter():
            known = qrels.setdefault(qrel.query_id, {})
            grade = int(qrel.relevance)
            if known.setdefault(qrel.doc_id, grade) != grade:
                raise UserError(
                    f"ir_datasets '{dataset_id}' judges ({qrel.query_id}, {qrel.doc_id}) "
                    "twice with different grades"
                )
    return qrels
