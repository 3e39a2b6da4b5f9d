"""What earlier processes learned about each served model, kept in the user's cache directory.

``limits.json`` beside the response cache (the directory of ``DOCKET_CACHE`` when it names
a file, else the user cache directory) holds one entry per canonical model name (which
holds the server's address):

* ``limit``/``overloaded``: the calls in flight last reached, so a new process starts
  there instead of ramping from :data:`docket.llm.limit.START` again. A limit found by an
  overload is a ceiling (grow by one per round trip from it); one a run merely reached may
  still double.
* ``json_form``: the ``response_format`` form the server took a JSON schema in
  (:mod:`docket.llm.json_form`), so a new process sends it at once, with no first call
  alone.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from docket.config import default_cache_path
from docket.writing import write_text

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
    _update(model, {"limit": known.limit, "overloaded": known.overloaded})


def recall_json_form(model: str) -> str | None:
    """The form of ``response_format`` ``model``'s server took a schema in, if known."""
    entry = _read(memory_path()).get(model)
    form = entry.get("json_form") if isinstance(entry, dict) else None
    return form if form in ("json_schema", "json_object") else None


def keep_json_form(model: str, form: str) -> None:
    """Keep the form ``model``'s server took a schema in (only logged if it cannot be)."""
    _update(model, {"json_form": form})


def _update(model: str, values: dict[str, object]) -> None:
    # One entry per model holds what each mechanism learned: a write keeps the others'.
    path = memory_path()
    with _LOCK:
        data = _read(path)
        entry = data.get(model)
        data[model] = {**(entry if isinstance(entry, dict) else {}), **values}
        try:
            # atomic: a reader never sees half a file, nor two processes each other's
            write_text(path, json.dumps(data, indent=1, sort_keys=True))
        except OSError as exc:
            log.debug("could not keep what was learned of %s in %s: %s", model, path, exc)
