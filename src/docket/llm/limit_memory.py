"""The calls in flight last reached against each model, kept in the user's cache directory.

A new process starts a model at what the last one learned instead of ramping from
:data:`docket.llm.limit.START` again: ``limits.json`` beside the response cache (the
directory of ``DOCKET_CACHE`` when it names a file, else the user cache directory), one
entry per canonical model name (which holds the server's address). A limit found by an
overload is a ceiling (grow by one per round trip from it); one a run merely reached may
still double.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from docket.config import default_cache_path

log = logging.getLogger(__name__)
FILE = "limits.json"
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Known:
    """What an earlier process reached against a model: its limit, and if it was a ceiling."""

    limit: int
    overloaded: bool


def memory_path() -> Path:
    """Where the limits are kept (follows ``DOCKET_CACHE``, so tests stay isolated)."""
    cache = os.environ.get("DOCKET_CACHE", "")
    base = Path(cache).parent if cache and cache != "off" else Path(default_cache_path()).parent
    return base / FILE


def _read(path: Path) -> dict[str, dict[str, object]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}  # none yet, or unreadable: nothing is known, the limit ramps
    return data if isinstance(data, dict) else {}


def recall_limit(model: str) -> Known | None:
    """The limit an earlier process reached against ``model``, if any."""
    entry = _read(memory_path()).get(model)
    if not isinstance(entry, dict):
        return None
    limit = entry.get("limit")
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        return None
    return Known(limit, bool(entry.get("overloaded")))


def keep_limit(model: str, known: Known) -> None:
    """Keep ``known`` for ``model``; a file that cannot be written is only logged."""
    path = memory_path()
    with _LOCK:
        data = _read(path)
        data[model] = {"limit": known.limit, "overloaded": known.overloaded}
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temp = path.with_suffix(f".{os.getpid()}.tmp")
            temp.write_text(json.dumps(data, indent=1, sort_keys=True), encoding="utf-8")
            temp.replace(path)  # atomic: a reader never sees half a file
        except OSError as exc:
            log.debug("could not keep the calls-in-flight limit in %s: %s", path, exc)
