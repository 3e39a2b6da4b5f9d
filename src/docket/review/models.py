"""The review tables, as the review package names them.

They are declared in the store (:mod:`docket.store.review_tables`), the bottom layer, so
that the store's migration ledger creates them without importing anything above it; code
above the store imports them from here.
"""

from docket.store.review_tables import (
    TASK_CLOSED,
    TASK_DONE,
    TASK_OPEN,
    Assignment,
    Decision,
    Reviewer,
    ReviewTask,
    TaskFacets,
)

__all__ = [
    "TASK_CLOSED",
    "TASK_DONE",
    "TASK_OPEN",
    "Assignment",
    "Decision",
    "ReviewTask",
    "Reviewer",
    "TaskFacets",
]
