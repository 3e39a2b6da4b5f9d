"""Batch execution of judging jobs: local asyncio by default, Ray optionally."""

from docket.runner.batch_loop import JobOutcome, finalize_job, run_judge_job
from docket.runner.escalate import apply_human_decisions, enqueue_escalations
from docket.runner.jobs import JobResult, judge_job
from docket.runner.results import StoredResults

__all__ = [
    "JobOutcome",
    "JobResult",
    "StoredResults",
    "apply_human_decisions",
    "enqueue_escalations",
    "finalize_job",
    "judge_job",
    "run_judge_job",
]
