"""Persistent response cache: SQLite, keyed by a hash of the canonical request JSON."""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path

from docket.llm.types import Completion


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

    def get(self, key: str) -> Completion | None:
        """Return the cached completion for ``key``, or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT completion FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return Completion.from_json(json.loads(row[0])) if row else None

    def put(self, key: str, model: str, completion: Completion) -> None:
        """Store ``completion`` under ``key`` (last write wins)."""
        blob = json.dumps(completion.to_json())
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, completion) VALUES (?, ?, ?)",
                (key, model, blob),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Close the underlying connection."""
        with self._lock:
            self._db.close()
