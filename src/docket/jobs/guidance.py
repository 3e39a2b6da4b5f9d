"""A job keeps the guidance of every query it judged, so a rerun cannot mix two texts.

Guidance (the collection's description of a query, see :class:`~docket.relevance.Pair`)
changes the prompt, so judgments made with one text are not comparable with judgments
made with another. The job keeps each query's text in a ``guidance`` note the first time
the query is judged with guidance (or in a job that has guidance); a later run of the
job whose text for that query differs, or that brings guidance to a query the job
already judged without, is refused before any call.
"""

from __future__ import annotations

from collections.abc import Mapping

from docket.errors import ConfigError
from docket.store import Store
from docket.store.judgments import judged_queries
from docket.store.spend import add_note, notes_of

KIND = "guidance"


def job_guidance(store: Store, job: str) -> dict[str, str]:
    """``{qid: guidance}`` the job judged with (empty for a job without guidance)."""
    recorded: dict[str, str] = {}
    with store.read_session() as session:
        for _, data in notes_of(session, job, KIND):
            recorded.update(data)
    return recorded


def check_guidance(store: Store, job: str, guidance: Mapping[str, str]) -> None:
    """Refuse guidance that differs from what the job judged with; keep new queries' texts.

    Args:
        store: the job's store.
        job: the job's name.
        guidance: ``{qid: text}`` of this run's input ("" for a query without).

    Raises:
        ConfigError: a query whose text differs from the job's (the qid is named).
    """
    recorded = job_guidance(store, job)
    if not recorded and not any(guidance.values()):
        return  # a job without guidance, run without: nothing to keep
    new = {qid: text for qid, text in guidance.items() if qid not in recorded}
    with store.session() as session:
        # a query judged before any guidance was kept was judged without
        before = judged_queries(session, job, sorted(new)) if new else set()
        for qid, text in sorted(guidance.items()):
            old = recorded.get(qid, "" if qid in before else None)
            if old is not None and old != text:
                raise ConfigError(
                    f"job '{job}' judged query {qid} with "
                    f"{'other guidance' if old and text else 'guidance' if old else 'no guidance'}"
                    f"; this run's guidance would mix judgments of two prompts",
                    hint="give the same guidance to resume it, or pick a new name with --job",
                )
        if new:
            add_note(session, job, KIND, new)
