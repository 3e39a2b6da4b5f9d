"""The one batch loop of judging: local asyncio by default, Ray optionally.

:func:`judge_pairs` is the runner's one verb: it claims, judges and saves the pairs of a
job and returns a :class:`Tally` of what it did; :func:`docket.jobs.run_job` composes it
with the batch step (:func:`finalize_job`) and the review queue.
"""

from docket.runner.batch_loop import finalize_job, judge_pairs
from docket.runner.batches import Tally
from docket.runner.escalate import apply_human_decisions, enqueue_escalations
from docket.runner.results import StoredResults

__all__ = [
    "StoredResults",
    "Tally",
    "apply_human_decisions",
    "enqueue_escalations",
    "finalize_job",
    "judge_pairs",
]
