"""Batch execution of judging jobs: local asyncio by default."""

from docket.runner.local import JobOutcome, finalize_job, run_judge_job

__all__ = ["JobOutcome", "finalize_job", "run_judge_job"]
