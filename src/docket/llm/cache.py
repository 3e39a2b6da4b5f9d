"""Where answered calls are kept, keyed by a hash of the canonical request JSON.

Two keepers share one lookup (:class:`Recall`) in :meth:`docket.llm.model.Model.generate`:
the user's response cache (:class:`ResponseCache`, per machine, optional), and the call
journal of the pair being judged, which the runner puts in :data:`pair_calls` for the
pair's calls (kept with the job in the store whatever the cache setting, so a resume on
any worker replays what was paid for).
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Protocol

from docket.llm.types import Completion, RequestKey


class Recall(Protocol):
    """Answers kept by request key: a hit means no call is made."""

    def get(self, key: str | RequestKey) -> Completion | None:
        """The kept answer to the request of ``key``, or None."""

    def put(self, key: str | RequestKey, model: str, completion: Completion) -> None:
        """Keep ``completion`` as the answer of ``model`` to the request of ``key``."""


pair_calls: ContextVar[Recall | None] = ContextVar("docket_pair_calls", default=None)
"""The call journal of the pair whose calls run in this context (None: no journal)."""


@contextmanager
def journaled(calls: Recall | None) -> Iterator[None]:
    """Run the ``with`` block's calls (and the tasks it starts) with ``calls`` as journal."""
    token = pair_calls.set(calls)
    try:
        yield
    finally:
        pair_calls.reset(token)


class ResponseCache:
    """Stores completions by request key; a hit means no call is made.

    Args:
        path: SQLite file; ``":memory:"`` for a process-local cache.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        if self.path != ":memory:":
            # WAL with synchronous=NORMAL: a commit is not a disk sync (a crash of the process
            # loses nothing; a power cut may lose the last answers, which are only a cache).
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=30000")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS responses ("
            " key TEXT PRIMARY KEY, model TEXT NOT NULL, completion TEXT NOT NULL,"
            " created_at TEXT DEFAULT CURRENT_TIMESTAMP)"
        )
        self._db.commit()

    def get(self, key: str | RequestKey) -> Completion | None:
        """Return the cached completion for ``key``, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT completion FROM responses WHERE key = ?", (str(key),)
            ).fetchone()
        return Completion.from_json(json.loads(row[0])) if row else None

    def put(self, key: str | RequestKey, model: str, completion: Completion) -> None:
        """Store ``completion`` under ``key`` (last write wins)."""
        blob = json.dumps(completion.to_json())
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, completion) VALUES (?, ?, ?)",
                (str(key), model, blob),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Close the underlying connection."""
        with self._lock:
            self._db.close()
